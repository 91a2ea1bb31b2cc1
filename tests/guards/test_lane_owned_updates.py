"""``lane_owned_updates($$$S)``: an in-place update of memory survives
thread_per_row_to_warp_per_row when the loop around it is one the rewrite strides by lane,
its index is that loop's own variable, and no other lane touches the element. Each verdict
with its reason; the golden cases (tests/golden/thread_per_row_to_warp_per_row/) and the GPU
gate (tests/gate/test_warp_per_row_in_place_gpu.py) run the rule itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from tree_sitter import Node

from klc.cuda.model import Unit
from klc.cuda.parse import parse_bytes, read_source
from klc.guards import GuardContext, evaluate, lanes
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.rule import RuleSet
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
     "        }", "each write in the loops of `float* y = out + (size_t)row * cols; fl…` touches "
     "the element of its iteration, which one lane owns (1 in-place update)"),
    # two updates in two loops with the same start, one an increment
    (NORMALISE + "        for (int c = 0; c < cols; c++) {\n            y[c] *= 2.0f;\n"
     "        }\n        for (int c = 0; c < cols; c++) {\n            y[c]++;\n        }",
     "(2 in-place updates)"),
    # through the matrix itself, with an offset loop start shared by every loop
    ("        for (int j = 1; j < cols; j++) {\n            out[row * cols + j] = in[j];\n"
     "        }\n        for (int j = 1; j < cols; j++) {\n"
     "            out[row * cols + j] -= in[0];\n        }", "(1 in-place update)"),
    # the loop step and bound in the spellings the isomorphisms take, a bare body
    (NORMALISE + "        for (int c = 0; cols > c; ++c)\n            y[c] *= 1.0f / s;",
     "(1 in-place update)"),
    # an update spelled as a store, in a strided loop
    (NORMALISE + "        for (int c = 0; c < cols; c++) {\n            y[c] = y[c] / s;\n"
     "        }", "(1 in-place update)"),
    ("        float m = 0.0f;\n        for (int c = 0; c < cols; c++) {\n"
     "            m = fmaxf(m, in[c]);\n        }\n        out[row] = m;",
     "updates no memory in place and stores only what every lane stores alike"),
    # a float maximum spelled with an if after an update (max_idiom), and a causal row: the
    # bound `c <= t`, a maximum followed by a store, the row handed to expf only as values
    ("        float* y = out + row * cols;\n        float best = 0.0f;\n"
     "        for (int c = 0; c < cols; c++) {\n            y[c] -= in[c];\n"
     "            if (y[c] > best) best = y[c];\n        }",
     "(1 in-place update)"),
    ("        float* y = out + row * cols;\n        const int t = row % cols;\n"
     "        float m = -INFINITY;\n        for (int c = 0; c <= t; c++) {\n"
     "            const float v = in[c] * 0.5f;\n            if (v > m) m = v;\n"
     "            y[c] = v;\n        }\n        float s = 0.0f;\n"
     "        for (int c = 0; c <= t; c++) {\n            y[c] = expf(y[c] - m);\n"
     "            s += y[c];\n        }\n        for (int c = 0; c < cols; c++) {\n"
     "            y[c] = c <= t ? y[c] / s : 0.0f;\n        }", "(2 in-place updates)"),
])
def test_updates_each_element_in_its_own_lane(body: str, reason: str) -> None:
    ok, why = verdict(body)
    assert ok, why
    assert reason in why, why


@pytest.mark.parametrize(("body", "reason"), [
    # outside any loop: every lane would add
    ("        out[row] += 1.0f;", "`out[row] += 1.0f` (k.cu:4:9) updates memory in place "
     "outside the loops the rewrite strides: every lane would apply it"),
    # a loop that the rewrite leaves sequential: an if-style maximum of an int among other
    # statements (fmaxf would convert it: the max_idiom isomorphism does not take it)
    ("        float* y = out + row * cols;\n        int best = 0;\n"
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
     "            }\n        }", "updates memory in place at an element whose index is not "
     "the loop variable `it` plus terms that stay fixed"),
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
    # an update spelled as a store that every lane runs (y = alpha * A x + beta * y)
    ("        float s = 0.0f;\n        for (int c = 0; c < cols; c++) {\n"
     "            s += in[row * cols + c];\n        }\n"
     "        out[row] = 0.5f * s + 2.0f * out[row];",
     "`out[row] = 0.5f * s + 2.0f * out[row]` (k.cu:8:9) updates memory in place outside "
     "the loops the rewrite strides: every lane would apply it"),
    # the same, through a value read first
    ("        float old = out[row];\n        out[row] = old + 1.0f;",
     "`out[row] = old + 1.0f` (k.cu:5:9) stores to memory that every lane runs, and "
     "`out[row]` (k.cu:4:21) reads that memory before it: a lane may read it after another "
     "lane's store"),
    # a store in a strided loop to one element: the last iteration's value no longer wins
    ("        for (int c = 0; c < cols; c++) {\n            out[row] = in[row * cols + c];\n"
     "        }", "`out[row] = in[row * cols + c]` (k.cu:5:13) stores to memory at an element "
     "whose index is not the loop variable `c` plus terms that stay fixed"),
    # a store in a loop the rewrite may stride (the maximum of a double spelled with an if,
    # which the max_idiom isomorphism does not take for fmaxf) or not
    ("        float* y = out + row * cols;\n        double best = 0.0;\n"
     "        for (int c = 0; c < cols; ++c) {\n            y[c] = in[c];\n"
     "            if (in[c] > best) best = in[c];\n        }\n        out[row] = best;",
     "`y[c] = in[c]` (k.cu:7:13) stores to memory in a loop that the rewrite may or may not "
     "stride by lane"),
    # elements stored by their lanes, then read by every lane
    ("        float* y = out + row * cols;\n        for (int c = 0; c < cols; c++) {\n"
     "            y[c] = 2.0f * in[c];\n        }\n        float first = y[0];\n"
     "        out[rows * cols] = first;",
     "`y[0]` (k.cu:8:23) reaches the memory of `y` other than as `y[c]`"),
])
def test_an_update_another_lane_could_see_is_refused(body: str, reason: str) -> None:
    ok, why = verdict(body)
    assert not ok, why
    assert reason in why, why


# the predicate mirrors which loops the rule's sub-rules stride: it must never call a loop
# strided that the rule leaves sequential (then an update there would run on every lane)

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "thread_per_row_to_warp_per_row"


def _top_loops(unit: Unit, start: int, end: int) -> list[Node]:
    """The loops in [start, end) that no other loop there holds, in order, less the shuffle
    loops a rewrite adds."""
    out = []
    for n in unit.nodes_of_type("for_statement", "while_statement", "do_statement"):
        if not (start <= n.start_byte and n.end_byte <= end) or b"offset" in unit.source[
                n.start_byte:n.start_byte + 40]:
            continue
        if lanes._outermost_loop(n, start, end) is None:
            out.append(n)
    return out


@pytest.mark.parametrize("path", sorted(
    [p for p in GOLDEN.glob("*.cu") if not p.name.endswith(".expected.cu")]
    + [ROOT / "bench" / "transfer" / f for f in (
        "softmax_thread_row.cu", "cross_entropy_padded.cu", "embedding_row_thread.cu",
        "linear_forward.cu", "cumsum_rows.cu", "row_argmax.cu", "gemv_transposed.cu",
        "gemv_rows.cu", "layernorm_backward_thread_row.cu", "layernorm_thread_row.cu",
        "logsumexp_rows.cu", "rmsnorm_thread_row.cu", "attention_scores_softmax.cu")]),
    ids=lambda p: p.name)
def test_a_loop_the_predicate_calls_strided_is_strided_by_the_rule(path: Path) -> None:
    rules = [r for r in RuleSet.load([str(ROOT / "skills")]).rules
             if r.name == "thread_per_row_to_warp_per_row"]
    unit = parse_bytes(read_source(path), path.name)
    sites = find_sites(unit, rules, {"lane": "lane"}, spec_of(unit), clang=False)
    for site in sites:
        body = site.match.bindings["BODY"]
        ctx = GuardContext(site.match)
        before = _top_loops(unit, body.start, body.end)
        claimed = [lanes._strided(ctx, loop) == "" for loop in before]
        out = apply_rules(unit, rules, {"lane": "lane"}, spec_of(unit), clang=False)
        if not out.changed:
            continue  # (refused: nothing runs on a warp)
        new = parse_bytes(out.source, path.name)
        fn = new.function_at(new.source.index(site.match.function.name.encode() + b"("))
        after = _top_loops(new, fn.body_start, fn.body_end)
        after = [n for n in after if n.start_byte > new.source.index(b"if (", fn.body_start)]
        assert len(after) == len(before), (len(after), len(before))
        for ok, loop, done in zip(claimed, before, after, strict=True):
            strided = b"+= 32)" in new.source[done.start_byte:done.start_byte + 120]
            assert strided or not ok, unit.text(loop.start_byte, loop.start_byte + 60)


# a sum split across lanes counts its starting value once per lane: starts_at_zero takes a
# sum from 0 apart directly; any other start (a bias, a residual, a value assigned after the
# zero, a sum reached again by a loop around) is kept by a fresh zero partial that the lanes
# stride, the warp reduces, and the accumulator takes once (`acc += partial;`)

@pytest.mark.parametrize(("body", "acc"), [
    # a linear layer's output, the bias as the starting value
    ("        float val = in[row];\n        for (int c = 0; c < cols; c++) {\n"
     "            val += in[row * cols + c];\n        }\n        out[row] = val;", "val"),
    # zero, then changed before the loop
    ("        float acc = 0.0f;\n        acc = in[row];\n        for (int c = 0; c < cols; c++) {\n"
     "            acc += in[row * cols + c];\n        }\n        out[row] = acc;", "acc"),
    # zero once, summed again on every pass of a loop around
    ("        float acc = 0.0f;\n        for (int it = 0; it < 2; it = it * 2 + 1) {\n"
     "            for (int c = 0; c < cols; c++) {\n                acc += in[c];\n"
     "            }\n        }\n        out[row] = acc;", "acc"),
])
def test_a_sum_that_does_not_start_at_zero_is_added_once_as_a_reduced_partial(body: str,
                                                                              acc: str) -> None:
    rules = [r for r in RuleSet.load([str(ROOT / "skills")]).rules
             if r.name == "thread_per_row_to_warp_per_row"]
    launch = "void run(const float* in, float* out, int rows, int cols) {\n" \
        "    k<<<(rows + 255) / 256, 256>>>(in, out, rows, cols);\n}\n"
    unit = parse_bytes((KERNEL.replace("BODY", body) + launch).encode(), "k.cu")
    out = apply_rules(unit, rules, {"lane": "lane"}, None, clang=False)
    assert out.changed, [s.reason for s in out.refused]
    assert f"decltype({acc}) partial = 0;".encode() in out.source
    assert f"{acc} += partial;".encode() in out.source
    assert b"__shfl_xor_sync(0xffffffffu, partial, offset)" in out.source
    assert f"__shfl_xor_sync(0xffffffffu, {acc},".encode() not in out.source
    # at 0 the same sum is split directly
    zero = KERNEL.replace("BODY", "        float val = 0.0f;\n        for (int c = 0; c < cols; "
                          "c++) {\n            val += in[row * cols + c];\n        }\n"
                          "        out[row] = val;") + launch
    done = apply_rules(parse_bytes(zero.encode(), "k.cu"), rules, {"lane": "lane"}, None,
                       clang=False)
    assert done.changed and b"__shfl_xor_sync(0xffffffffu, val, offset)" in done.source
    assert b"partial" not in done.source


PRIVATE = """
rule probe {
  kind: skill
  anchor: ```
    $X += $E;
  ```
  guard: private_scalar($X)
  rewrite replace: ```
    $X += $E;
  ```
}
"""


def private(source: str) -> tuple[bool, str]:
    unit = parse_bytes(source.encode(), "k.cu")
    site = find_sites(unit, load_rules_text(PRIVATE, "p.rule"))[0]
    v = evaluate(parse_guard("private_scalar($X)"), GuardContext(site.match))
    return v.ok, v.reason


@pytest.mark.parametrize(("source", "reason"), [
    ("__global__ void k(const float* in, float* out) {\n    float acc = in[0];\n"
     "    acc += in[1];\n    out[0] = acc;\n}\n", "`acc` is a local `float` of its own"),
    ("__global__ void k(const float* in, float* out) {\n    double s = in[0];\n"
     "    s += in[1];\n    out[0] = (float)s;\n}\n", "`s` is a local `double`"),
    ("template <typename T>\n__global__ void k(const T* in, T* out) {\n    T v = in[0];\n"
     "    v += in[1];\n    out[0] = v;\n}\n", "`v` is a local `T`"),
    ("__global__ void k(const int* in, int* out) {\n    const int a = in[2];\n"
     "    unsigned long long n = a;\n    n += in[1];\n    out[0] = (int)n;\n}\n",
     "`n` is a local `unsigned long long`"),
])
def test_private_scalar_holds_for_a_local_each_lane_owns(source: str, reason: str) -> None:
    ok, why = private(source)
    assert ok and reason in why, why


@pytest.mark.parametrize(("source", "reason"), [
    # a parameter, a global: not a local of the kernel
    ("__global__ void k(float* out, float acc) {\n    acc += 1.0f;\n    out[0] = acc;\n}\n",
     "`acc` is not a local declared before"),
    ("__device__ float total;\n__global__ void k(const float* in) {\n"
     "    total += in[0];\n}\n", "`total` is not a local declared before"),
    # a pointer, a reference
    ("__global__ void k(const float* in, float* out) {\n    const float* p = in;\n"
     "    p += 4;\n    out[0] = *p;\n}\n", "is not a plain local scalar"),
    ("__global__ void k(const float* in, float* out) {\n    float a = 0.0f;\n"
     "    float& r = a;\n    r += in[0];\n    out[0] = a;\n}\n", "is not a plain local scalar"),
    # a type no shuffle takes
    ("__global__ void k(const short* in, short* out) {\n    short s = in[0];\n"
     "    s += in[1];\n    out[0] = s;\n}\n", "is a `short`, which __shfl_xor_sync does not take"),
    # its address taken
    ("__global__ void k(const float* in, float* out) {\n    float acc = in[0];\n"
     "    float* p = &acc;\n    acc += in[1];\n    out[0] = *p;\n}\n",
     "the address of `acc`"),
])
def test_private_scalar_refuses_what_lanes_would_share_or_cannot_shuffle(source: str,
                                                                         reason: str) -> None:
    ok, why = private(source)
    assert not ok and reason in why, why


def block_shapes(body: str) -> tuple[bool, str]:
    unit = parse_bytes(KERNEL.replace("BODY", body).encode(), "k.cu")
    (site,) = find_sites(unit, load_rules_text(PROBE, "p.rule"))
    v = evaluate(parse_guard("block_strided_shapes($$$BODY)"), GuardContext(site.match))
    return v.ok, v.reason


@pytest.mark.parametrize("body", [
    # a maximum, a sum from a bias, an element-wise sweep (thread_per_row_to_block_per_row's
    # three shapes), and a loop no rewrite strides (an argmax: every thread runs it whole)
    "        float m = -INFINITY;\n        for (int c = 0; c < cols; c++) {\n"
    "            if (in[c] > m) m = in[c];\n        }\n        float s = in[row];\n"
    "        for (int c = 0; c < cols; c++) {\n            const float e = expf(in[c] - m);\n"
    "            s += e;\n        }\n        for (int c = 0; c < cols; c++) {\n"
    "            out[row * cols + c] = expf(in[c] - m) / s;\n        }",
    # a maximum followed by a store
    "        float m = 0.0f;\n        for (int c = 0; c < cols; c++) {\n"
    "            m = fmaxf(m, in[c]);\n            out[row * cols + c] = in[c];\n        }",
    # two sums in one sweep
    "        float s = 0.0f;\n        float q = 0.0f;\n        for (int c = 0; c < cols; c++) {\n"
    "            s += in[c];\n            q += in[c] * in[c];\n        }\n"
    "        out[row] = q - s;",
    "        float best = in[0];\n        int arg = 0;\n        for (int c = 1; c < cols; c++) {\n"
    "            if (in[c] > best) {\n                best = in[c];\n                arg = c;\n"
    "            }\n        }\n        out[row] = arg;",
])
def test_block_strided_shapes_holds_for_the_block_rewrites_shapes(body: str) -> None:
    ok, why = block_shapes(body)
    assert ok, why


@pytest.mark.parametrize(("body", "reason"), [
    # a prefix sum
    ("        float s = 0.0f;\n        for (int c = 0; c < cols; c++) {\n            s += in[c];\n"
     "            out[row * cols + c] = s;\n        }",
     "is a loop the warp rewrite strides but the block rewrite does not"),
    # a name the block rewrite declares
    ("        float s = 0.0f;\n        for (int c = 0; c < cols; c++) {\n"
     "            const float warp = in[c];\n            s += warp;\n        }\n"
     "        out[row] = s;",
     "uses a name the block rewrite declares"),
])
def test_block_strided_shapes_refuses_a_loop_the_block_rewrite_leaves_whole(
        body: str, reason: str) -> None:
    ok, why = block_shapes(body)
    assert not ok and reason in why, why


EXACT = """
rule probe {
  kind: skill
  anchor: ```
    $X += $E;
  ```
  guard: exact_sum($X, $E)
  rewrite replace: ```
    $X += $E;
  ```
}
"""


@pytest.mark.parametrize(("source", "ok", "reason"), [
    ("__global__ void k(const float* in, float* out) {\n    float s = 1.0f;\n"
     "    s += in[1];\n    out[0] = s;\n}\n", True, "exactly or by float rounding"),
    ("template <typename T>\n__global__ void k(const T* in, T* out) {\n    T s = in[0];\n"
     "    s += in[1] * 2.0f;\n    out[0] = s;\n}\n", True, "exactly or by float rounding"),
    ("__global__ void k(const int* in, int* out) {\n    long long n = 5;\n"
     "    n += in[1] * 3;\n    out[0] = (int)n;\n}\n", True, "exactly or by float rounding"),
    # an int of float terms truncates at every step
    ("__global__ void k(const float* in, int* out) {\n    int n = 0;\n"
     "    n += in[1] * 4.0f;\n    out[0] = n;\n}\n", False, "is not known to be an integer"),
])
def test_exact_sum(source: str, ok: bool, reason: str) -> None:
    unit = parse_bytes(source.encode(), "k.cu")
    site = find_sites(unit, load_rules_text(EXACT, "p.rule"))[0]
    v = evaluate(parse_guard("exact_sum($X, $E)"), GuardContext(site.match))
    assert v.ok == ok and reason in v.reason, v.reason


@pytest.mark.parametrize(("body", "ok", "reason"), [
    # math functions take values
    ("        float s = 0.0f;\n        for (int c = 0; c < cols; c++) {\n"
     "            s += expf(in[c]);\n        }\n        out[row] = logf(s);", True,
     "calls nothing that stores"),
    ("        atomicAdd(&out[0], in[row]);", False, "may store to memory"),
    ("        printf(\"%f\\n\", in[row]);", False, "may store to memory"),
])
def test_no_storing_calls(body: str, ok: bool, reason: str) -> None:
    unit = parse_bytes(KERNEL.replace("BODY", body).encode(), "k.cu")
    (site,) = find_sites(unit, load_rules_text(PROBE, "p.rule"))
    v = evaluate(parse_guard("no_storing_calls($$$BODY)"), GuardContext(site.match))
    assert v.ok == ok and reason in v.reason, v.reason


def test_no_storing_calls_refuses_a_helper_of_the_file() -> None:
    source = "__device__ void add(float* p, float v) { *p += v; }\n" \
        + KERNEL.replace("BODY", "        add(&out[row], in[row]);")
    unit = parse_bytes(source.encode(), "k.cu")
    (site,) = find_sites(unit, load_rules_text(PROBE, "p.rule"))
    v = evaluate(parse_guard("no_storing_calls($$$BODY)"), GuardContext(site.match))
    assert not v.ok and "`add(&out[row], in[row])`" in v.reason, v.reason


@pytest.mark.parametrize(("helper", "ok", "reason"), [
    # read-only helpers: locals and by-value parameters written, pure helpers called
    ("__device__ bool skip(const int* ids, int k) {\n    int id = ids[k];\n"
     "    if (id < 0) return true;\n    k += 1;\n    return false;\n}\n", True,
     "calls nothing that stores"),
    ("__device__ int twice(int v) { return v * 2; }\n"
     "__device__ bool skip(const int* ids, int k) { return twice(ids[k]) < 0; }\n", True,
     "calls nothing that stores"),
    # storing helpers, each with the helper's own reason
    ("__device__ bool skip(int* ids, int k) { ids[k] = 0; return false; }\n", False,
     "`skip` stores to memory"),
    ("__device__ bool skip(const int* ids, int& k) { k = ids[0]; return false; }\n", False,
     "writes through the reference parameter `k`"),
    ("__device__ int hits;\n__device__ bool skip(const int* ids, int k) { hits++; "
     "return false; }\n", False, "writes `hits`, declared outside it"),
    ("__device__ bool skip(const int* ids, int k) { __shared__ int s; s = k; "
     "return s < 0; }\n", False, "writes the __shared__ `s`"),
    ("__device__ void bump(int* c) { atomicAdd(c, 1); }\n"
     "__device__ bool skip(int* ids, int k) { bump(ids); return false; }\n", False,
     "`skip` calls `bump`, which may store"),
    ("__device__ bool skip(const int* ids, int k) {\n"
     "    return k > 0 ? skip(ids, k - 1) : false;\n}\n", False, "calls `skip`"),
    ("__device__ bool skip(const int* ids, int k) { asm volatile(\"\"); return false; }\n",
     False, "holds inline asm"),
    # what a call it makes may do: a method may change its object, a function of another
    # file may write through the address it is handed; a value handed over is harmless
    ("struct Tally { int n; __device__ void bump() { n++; } };\n"
     "__device__ bool skip(const int* ids, int k) { Tally t{0}; t.bump(); return false; }\n",
     False, "calls the method `t.bump`"),
    ("__device__ void note(int* slot);\n"
     "__device__ bool skip(int* ids, int k) { note(ids + k); return false; }\n",
     False, "hands an address to `note`"),
    ("__device__ bool skip(const int* ids, int k) { return abs(ids[k]) > 3 && k > 0; }\n",
     True, "calls nothing that stores"),
])
def test_no_storing_calls_judges_the_files_helpers(helper: str, ok: bool, reason: str) -> None:
    """A call of a function this file defines is judged by that function's body (and the
    functions it calls): a pad check or an index helper that stores nothing may run once per
    lane; one that writes memory, a reference, a __shared__ or file-scope variable may not."""
    source = helper + KERNEL.replace(
        "BODY", "        if (!skip((const int*)in, row)) {\n            out[row] = in[row];\n"
        "        }")
    unit = parse_bytes(source.encode(), "k.cu")
    (site,) = find_sites(unit, load_rules_text(PROBE, "p.rule"))
    v = evaluate(parse_guard("no_storing_calls($$$BODY)"), GuardContext(site.match))
    assert v.ok == ok and reason in v.reason, v.reason


def test_no_storing_calls_refuses_a_reader_of_what_the_code_writes() -> None:
    """A helper that stores nothing but reads a buffer the code writes would see (or miss)
    other lanes' stores once the loop is spread over lanes."""
    helper = "__device__ float prev(const float* p, int i) { return i > 0 ? p[i - 1] : 0.0f; }\n"
    body = "        out[row] = in[row] + prev(out, row);"
    unit = parse_bytes((helper + KERNEL.replace("BODY", body)).encode(), "k.cu")
    (site,) = find_sites(unit, load_rules_text(PROBE, "p.rule"))
    v = evaluate(parse_guard("no_storing_calls($$$BODY)"), GuardContext(site.match))
    assert not v.ok and "`prev` is handed `out`, which the code writes" in v.reason, v.reason
    reads_in = KERNEL.replace("BODY", "        out[row] = in[row] + prev(in, row);")
    unit = parse_bytes((helper + reads_in).encode(), "k.cu")
    (site,) = find_sites(unit, load_rules_text(PROBE, "p.rule"))
    v = evaluate(parse_guard("no_storing_calls($$$BODY)"), GuardContext(site.match))
    assert v.ok, v.reason
