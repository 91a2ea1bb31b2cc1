"""The grid-stride skills on a GPU: every golden rewrite of grid_stride_loop and
grid_stride_sum (a dot product, a double dot product, warp-shuffle block sums, a size_t sum
of squares, a templated copy, the lineages' own steps) computes what its original computes
at the spec's sizes, and the rewrite grid_additive refuses (a kernel that keeps one
element's value per thread) does not: the guard stands where the gate would fail
(``python3 -m pytest -m gpu tests/gate/test_grid_stride_gpu.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import read_source

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "tests" / "golden" / d / p.name)
               for d in ("grid_stride_loop", "grid_stride_sum")
               for p in (ROOT / "tests" / "golden" / d).glob("*.expected.cu"))


@pytest.mark.gpu
@pytest.mark.parametrize("expected", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_golden_rewrite_matches_its_original(expected: Path) -> None:
    from klc.gate import gate

    original = expected.with_name(expected.name.replace(".expected.cu", ".cu"))
    rec = gate(read_source(expected), f"{expected}", reference=read_source(original),
               reference_path=str(original), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_the_refused_rewrite_would_be_wrong() -> None:
    """Without grid_additive the skill turned last_value_kept into a grid-stride loop over
    1/16 of the blocks: the gate finds its results wrong."""
    from klc.gate import gate

    src = ROOT / "tests/golden/grid_stride_loop/last_value_kept.cu"
    text = read_source(src).decode()
    bad = (text.replace('grid: ["ceil_div(n, 256)"]', 'grid: ["ceil_div(ceil_div(n, 256), 16)"]')
           .replace("    {\n        int i = blockIdx.x * 256 + threadIdx.x;\n"
                    "        if (i < n) t = x[i] * 2.0f;\n    }\n",
                    "    for (int i = blockIdx.x * 256 + threadIdx.x; i < n; "
                    "i += 256 * gridDim.x) t = x[i] * 2.0f;\n"))
    assert bad != text and "gridDim" in bad
    rec = gate(bad.encode(), "bad.cu", reference=read_source(src), reference_path=str(src),
               stages=("compile", "verify"))
    assert rec.verdict == "failed" and "verify" in rec.reason, rec.reason
