"""The row-split, wide grid-stride and window-interior skills on a GPU: every golden rewrite
of block_column_to_row_split, block_column2_to_row_split_early_return, grid_stride_loop_wide
and clipped_window_to_interior_path (float, double and int accumulators; a size_t byte
histogram; an int64 sum; an 8-bit Gaussian) computes what its original computes at the
spec's sizes (``python3 -m pytest -m gpu tests/gate/test_new_skills_gpu.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import read_source

ROOT = Path(__file__).resolve().parents[2]
SKILLS = ("block_column_to_row_split", "block_column2_to_row_split_early_return",
          "grid_stride_loop_wide", "clipped_window_to_interior_path")
CASES = sorted(p for d in SKILLS for p in (ROOT / "tests" / "golden" / d).glob("*.expected.cu"))


def test_every_skill_has_a_rewrite_to_verify() -> None:
    assert {p.parent.name for p in CASES} == set(SKILLS)


@pytest.mark.gpu
@pytest.mark.parametrize("expected", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_golden_rewrite_matches_its_original(expected: Path) -> None:
    from klc.gate import gate

    original = expected.with_name(expected.name.replace(".expected.cu", ".cu"))
    rec = gate(read_source(expected), f"{expected}", reference=read_source(original),
               reference_path=str(original), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason
