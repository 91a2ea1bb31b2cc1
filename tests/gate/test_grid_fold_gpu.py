"""The fold, tree-addressing and block-scan skills on a GPU: every golden rewrite of
grid_stride_fold, select_to_guarded_local, interleaved_tree_to_sequential and
sweeps_to_shuffle_block_scan computes what its original computes at the spec's sizes, and
the fold grid_folded refuses (a maximum of signed floats published through an integer
atomicMax of their bits) would be wrong: the guard stands where the gate would fail
(``python3 -m pytest -m gpu tests/gate/test_grid_fold_gpu.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import read_source

ROOT = Path(__file__).resolve().parents[2]
SKILLS = ("grid_stride_fold", "select_to_guarded_local", "interleaved_tree_to_sequential",
          "sweeps_to_shuffle_block_scan")
CASES = sorted((ROOT / "tests" / "golden" / d / p.name) for d in SKILLS
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
def test_the_refused_fold_would_be_wrong() -> None:
    """Without grid_folded the skill folded signed_bits' maxima 16 elements per thread: the
    integer atomicMax of negative floats' bits keeps the block maximum of the largest
    magnitude (the start, of a tiny magnitude, loses to every block), and with 16 times fewer
    blocks, each the maximum of 16 times more elements, that is another value: the gate finds
    the result wrong."""
    from klc.gate import gate

    src = ROOT / "tests/golden/grid_stride_fold/signed_bits.cu"
    text = read_source(src).decode()
    # all values negative; the start of `out` a negative float of a tiny magnitude
    original = (text.replace("init: normal}\n  - {name: out",
                             "init: \"normal(-8, 1)\"}\n  - {name: out")
                .replace("role: inout, init: normal}",
                         "role: inout, init: \"uniform(-0.001, -0.0009)\"}"))
    bad = (original.replace('grid: ["ceil_div(n, 256)"]',
                            'grid: ["ceil_div(ceil_div(n, 256), 16)"]')
           .replace("    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "    float m = -INFINITY;\n    if (i < n) {\n        m = x[i];\n    }\n",
                    "    float m = -INFINITY;\n"
                    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; "
                    "i += blockDim.x * gridDim.x) {\n        m = fmaxf(m, x[i]);\n    }\n"))
    assert original != text and "normal(-8, 1)" in original and "-0.0009" in original
    assert bad != original and "gridDim" in bad
    rec = gate(bad.encode(), "bad.cu", reference=original.encode(), reference_path=str(src),
               stages=("compile", "verify"))
    assert rec.verdict == "failed" and "verify" in rec.reason, rec.reason
