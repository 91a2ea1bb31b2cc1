"""``lane_owned_updates($$$S)`` (issue 17 item 6): an in-place update of memory survives
thread_per_row_to_warp_per_row when the loop around it is one the rewrite strides by lane,
its index is that loop's own variable, and no other lane touches the element. Each verdict
with its reason; the golden cases (tests/golden/thread_per_row_to_warp_per_row/) and the GPU
gate (tests/gate/test_warp_per_row_in_place_gpu.py) run the rule itself."""

from __future__ import annotations

import pytest

from klc.cuda.parse import parse_bytes
from klc.guards import GuardContext, evaluate
from klc.pipeline import find_sites
from klc.rule.compile import parse_guard
from klc.rule.ruleset import load_rules_text

PROBE = """
rule probe {
  kind: skill
  anchor: ```
    int $R = blockIdx.x * blockDim.x + threadIdx.x;
    if ($R < $ROWS) {
        $$$BODY;
    }
  ```
  guard: lane_owned_updates($$$BODY)
  rewrite replace: ```
    int $R = blockIdx.x * blockDim.x + threadIdx.x;
    if ($R < $ROWS) {
        $$$BODY;
    }
  ```
}
"""

KERNEL = """__global__ void k(const float* in, float* out, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
BODY
    }
}
"""


def verdict(body: str) -> tuple[bool, str]:
    unit = parse_bytes(KERNEL.replace("BODY", body).encode(), "k.cu")
    (site,) = find_sites(unit, load_rules_text(PROBE, "p.rule"))
    v = evaluate(parse_guard("lane_owned_updates($$$BODY)"), GuardContext(site.match))
    assert v.ok == site.ok and (v.ok or v.reason in site.reason), (v, site.reason)
    return v.ok, v.reason


NORMALISE = """\
        float* y = out + (size_t)row * cols;
        float s = 0.0f;
        for (int c = 0; c < cols; c++) {
            y[c] = expf(in[(size_t)row * cols + c]);
            s += y[c];
        }
"""


@pytest.mark.parametrize(("body", "reason"), [
    (NORMALISE + "        for (int c = 0; c < cols; c++) {\n            y[c] /= s;\n"
     "        }", "each in-place update in `float* y = out + (size_t)row * cols; fl…` touches "
     "the element of its loop's own iteration, which one lane owns (1 update)"),
    # two updates in two loops with the same start, one an increment
    (NORMALISE + "        for (int c = 0; c < cols; c++) {\n            y[c] *= 2.0f;\n"
     "        }\n        for (int c = 0; c < cols; c++) {\n            y[c]++;\n        }",
     "(2 updates)"),
    # through the matrix itself, with an offset loop start shared by every loop
    ("        for (int j = 1; j < cols; j++) {\n            out[row * cols + j] = in[j];\n"
     "        }\n        for (int j = 1; j < cols; j++) {\n"
     "            out[row * cols + j] -= in[0];\n        }", "(1 update)"),
    ("        float m = 0.0f;\n        for (int c = 0; c < cols; c++) {\n"
     "            m = fmaxf(m, in[c]);\n        }\n        out[row] = m;",
     "updates no memory in place"),
])
def test_updates_each_element_in_its_own_lane(body: str, reason: str) -> None:
    ok, why = verdict(body)
    assert ok, why
    assert reason in why, why


@pytest.mark.parametrize(("body", "reason"), [
    # outside any loop: every lane would add
    ("        out[row] += 1.0f;", "`out[row] += 1.0f` (k.cu:4:9) updates memory in place "
     "outside the loops the rewrite strides: every lane would apply it"),
    # a loop that the rewrite leaves sequential: an if-style maximum among other statements
    ("        float* y = out + row * cols;\n        float best = 0.0f;\n"
     "        for (int c = 0; c < cols; c++) {\n            y[c] -= in[c];\n"
     "            if (y[c] > best) best = y[c];\n        }\n        out[row] = best;",
     "assigns variables declared outside it other than as the sum or maximum it "
     "accumulates last: the rewrite would not stride it"),
    # a break: the loop leaves early, the rewrite keeps it sequential
    ("        float* y = out + row * cols;\n        for (int c = 0; c < cols; c++) {\n"
     "            if (in[c] < 0.0f) break;\n            y[c] *= 2.0f;\n        }",
     "may leave its body early: the rewrite would not stride it"),
    # nested: the outer loop is the one strided, and the index is not its variable
    ("        float* y = out + row * cols;\n        for (int it = 0; it < 3; it++) {\n"
     "            for (int c = 0; c < cols; c++) {\n                y[c] *= 0.5f;\n"
     "            }\n        }", "updates an element whose index is not the loop variable "
     "`it` plus terms that stay fixed"),
    # the row pointer moves between the loops
    ("        float* y = out + row * cols;\n        for (int c = 0; c < cols; c++) {\n"
     "            y[c] = in[c];\n        }\n        y += 1;\n"
     "        for (int c = 0; c < cols - 1; c++) {\n            y[c] += 1.0f;\n        }",
     "`y` (in `y[c]` or its loop's start `0`) may change between the loops"),
    # the row handed to a function
    ("        float* y = out + row * cols;\n        for (int c = 0; c < cols; c++) {\n"
     "            y[c] *= 2.0f;\n        }\n        finish_row(y, cols);",
     "`finish_row(y, cols)` (k.cu:8:9) hands the memory of `y` to a call"),
    # the element read by the next iteration (a running difference)
    ("        float* y = out + row * cols;\n        for (int c = 0; c < cols; c++) {\n"
     "            y[c] = in[c];\n        }\n        for (int c = 0; c < cols; c++) {\n"
     "            if (c > 0) y[c] -= y[c - 1];\n        }",
     "`y[c - 1]` (k.cu:9:32) reaches the memory of `y` other than as `y[c]` in a loop the "
     "rewrite strides from `0`: another lane may touch the element"),
    # the same memory through the matrix and through the row pointer
    ("        float* y = out + row * cols;\n        for (int c = 0; c < cols; c++) {\n"
     "            y[c] *= 2.0f;\n        }\n        out[row * cols] = 0.0f;",
     "`out[row * cols]` (k.cu:8:9) reaches the memory of `y` other than as `y[c]`"),
])
def test_an_update_another_lane_could_see_is_refused(body: str, reason: str) -> None:
    ok, why = verdict(body)
    assert not ok, why
    assert reason in why, why
