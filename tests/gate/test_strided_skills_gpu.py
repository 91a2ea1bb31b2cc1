"""The forward strided-loop skills of skills/experts/strided_loops.rule on a GPU: every
golden rewrite (a block-stride row, grid-stride loops along x and y, a row's loop tiled over
grid.y) computes what its original computes at the spec's sizes, and the rewrites their
guards refuse (a row sum strided over the block, a running maximum split into tiles) do not:
the guards stand where the gate would fail
(``python3 -m pytest -m gpu tests/gate/test_strided_skills_gpu.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import read_source

ROOT = Path(__file__).resolve().parents[2]
SKILLS = ("one_thread_to_block_stride", "guarded_element_to_grid_stride",
          "guarded_row_to_grid_y_stride", "whole_range_to_grid_y_tiles")
CASES = sorted((ROOT / "tests" / "golden" / d / p.name)
               for d in SKILLS for p in (ROOT / "tests" / "golden" / d).glob("*.expected.cu"))


def test_every_skill_has_a_case() -> None:
    assert {p.parent.name for p in CASES} == set(SKILLS)


@pytest.mark.gpu
@pytest.mark.parametrize("expected", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_golden_rewrite_matches_its_original(expected: Path) -> None:
    from klc.gate import gate

    original = expected.with_name(expected.name.replace(".expected.cu", ".cu"))
    rec = gate(read_source(expected), f"{expected}", reference=read_source(original),
               reference_path=str(original), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


def _refused_and_wrong(case: str, edits: list[tuple[str, str]]) -> None:
    from klc.gate import gate

    src = ROOT / "tests" / "golden" / case
    text = read_source(src).decode()
    bad = text
    for old, new in edits:
        assert old in bad, old
        bad = bad.replace(old, new)
    rec = gate(bad.encode(), "bad.cu", reference=read_source(src), reference_path=str(src),
               stages=("compile", "verify"))
    assert rec.verdict == "failed" and "verify" in rec.reason, rec.reason


@pytest.mark.gpu
def test_a_row_sum_strided_over_the_block_is_wrong() -> None:
    """What one_thread_to_block_stride would make of row_sum without assigns_only_locals:
    each thread's partial sum, the last one stored wins."""
    _refused_and_wrong("one_thread_to_block_stride/row_sum.cu", [
        ("block: [1]", "block: [256]"),
        ("for (int c = 0; c < cols; c++)", "for (int c = threadIdx.x; c < cols; c += blockDim.x)"),
    ])


@pytest.mark.gpu
def test_a_running_maximum_split_into_tiles_is_wrong() -> None:
    """What whole_range_to_grid_y_tiles would make of row_running_max without
    assigns_only_locals: each tile's maximum starts again from -inf."""
    _refused_and_wrong("whole_range_to_grid_y_tiles/row_running_max.cu", [
        ('grid: ["ceil_div(rows, 128)"]', 'grid: ["ceil_div(rows, 128)", 64]'),
        ("for (int j = 0; j < len; j++) {",
         "const int tile = len / (int)gridDim.y + (len % (int)gridDim.y != 0);\n"
         "        const int tile_start = (int)blockIdx.y * tile;\n"
         "        const int tile_end = tile_start + min(tile, len - tile_start);\n"
         "        for (int j = tile_start; j < tile_end; j++) {"),
    ])
