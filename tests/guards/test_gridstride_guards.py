"""``grid_additive(anchor)`` (klc/guards/gridstride.py): whether a kernel's one-element block
may become a grid-stride loop over fewer blocks. The golden cases of grid_stride_loop hold
the whole kernels; these probe one condition at a time."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites
from klc.rule.ruleset import load_rules_text

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
rule probe {
  kind: skill
  anchor: ```
    {
        int $I = blockIdx.x * 256 + threadIdx.x;
        if ($I < $N) $BODY
    }
  ```
  guard: grid_additive(anchor)
  rewrite replace: ```
    for (int $I = blockIdx.x * 256 + threadIdx.x; $I < $N; $I += 256 * gridDim.x) $BODY
  ```
}
"""

HELPER = "__device__ void keep(float* p, float v) { *p = v; }\n"


def verdict(prefix: str, body: str, suffix: str, helper: str = "") -> tuple[bool, str]:
    code = (f"{helper}__global__ void k(const float *x, float *out, int n) {{\n"
            "    __shared__ float s[256];\n"
            f"{prefix}\n    {{\n        int i = blockIdx.x * 256 + threadIdx.x;\n"
            f"        if (i < n) {body}\n    }}\n{suffix}\n}}\n")
    sites = find_sites(parse_bytes(code.encode(), "k.cu"), load_rules_text(PROBE, "t.rule"))
    assert len(sites) == 1, code
    return sites[0].ok, sites[0].reason


TREE = ("    s[threadIdx.x] = acc;\n    __syncthreads();\n"
        "    for (int k = 128; k > 0; k >>= 1) {\n"
        "        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];\n"
        "        __syncthreads();\n    }\n")


@pytest.mark.parametrize(("prefix", "body", "suffix"), [
    # a sum, a tree, one add per block
    ("    float acc = 0.0f;", "acc += x[i];",
     TREE + "    if (threadIdx.x == 0) atomicAdd(out, s[0]);"),
    # every thread adds its own sum: weight one each, no combination needed
    ("    float acc = 0.0f;", "{ acc += x[i]; }", "    atomicAdd(out, acc);"),
    # element-wise: nothing after the block; a pure call before it
    ("    const float a = fmaxf(1.0f, 2.0f);", "out[i] = a * x[i];", ""),
    # a zero test on the sum before adding it
    ("    float acc = 0.0f;", "acc += x[i];",
     TREE + "    if (threadIdx.x == 0 && s[0] != 0.0f) atomicAdd(out, s[0]);"),
])
def test_additive_kernels_are_accepted(prefix: str, body: str, suffix: str) -> None:
    ok, reason = verdict(prefix, body, suffix)
    assert ok, reason


@pytest.mark.parametrize(("prefix", "body", "suffix", "why"), [
    ("    float acc = 1.0f;", "acc += x[i];", "    atomicAdd(out, acc);",
     "does not start at zero"),
    ("    float acc = 0.0f;", "acc = acc + x[i];", "    atomicAdd(out, acc);",
     "not a sum"),  # (written out: the check reads `+=` only, and refuses)
    ("    float acc = 0.0f;", "{ acc += x[i]; out[i] = acc; }", "    atomicAdd(out, acc);",
     "reads the running sum"),
    ("    float acc = 0.0f;", "acc += x[threadIdx.x];", "    atomicAdd(out, acc);",
     "reads the thread's coordinates"),
    ("", "{ out[i] = x[i]; i++; }", "", "moves the element's index"),
    ("", "{ out[i] = x[i]; i += 1; }", "", "moves the element's index"),
    ("", "s[i % 256] = x[i];", "", "stores into shared memory"),
    ("    float acc = 0.0f;", "acc += x[i];", "    if (acc > 1.0f) atomicAdd(out, acc);",
     "a condition after the element block reads a sum"),
    ("    float acc = 0.0f;", "acc += x[i];", "    atomicAdd(out, sqrtf(acc));",
     "not a sum of the elements"),
    ("    float acc = 0.0f;", "acc += x[i];", "    atomicMax((int*)out, __float_as_int(acc));",
     "may store to memory"),
    ("    float acc = 0.0f;", "acc += x[i];", "    keep(out, acc);", "may store to memory"),
    ("    float acc = 0.0f;", "acc += x[i];", "    acc = 1.0f;\n    atomicAdd(out, acc);",
     "is given a value that is not a sum"),
    ("    out[0] = 0.0f;\n    float acc = 0.0f;", "acc += x[i];", "    atomicAdd(out, acc);",
     "a store into global memory outside the element block"),
    ("    float acc = 0.0f;", "acc += x[i];", "    if (gridDim.x > 1) atomicAdd(out, acc);",
     "depends on the block or the grid"),
])
def test_kernels_that_depend_on_the_dealing_are_refused(prefix: str, body: str, suffix: str,
                                                        why: str) -> None:
    ok, reason = verdict(prefix, body, suffix, HELPER)
    assert not ok and why in reason, reason


def test_klc_test_prints_a_reason_that_quotes_brackets(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A refusal's reason quotes code (`partial[blockIdx.x] = s[0]`); klc test prints it as
    it is, not as rich markup that eats the brackets."""
    from klc.cli import main

    case = tmp_path / "golden" / "grid_stride_loop"
    case.mkdir(parents=True)
    shutil.copy(ROOT / "tests/golden/grid_stride_loop/per_block_partials.cu", case)
    (case / "per_block_partials.why").write_text("a reason no rule gives\n")
    assert main(["test", str(tmp_path / "golden"), "--rules", str(ROOT / "skills")]) == 1
    assert "`partial[blockIdx.x] = s[0]`" in capsys.readouterr().out
