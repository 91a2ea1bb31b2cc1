"""rows_loop_tile_transpose on the rows-loop spelling of a first transpose (TILE_DIM and
BLOCK_ROWS macros, the block's extents on a 16 x 4 block, the walk's own naive end), then
pad_smem_tile: the kernel the skills make is the padded tile of the lineage's expert. Here
NVRTC compiles each; on a GPU the gate verifies each against its original at the spec's
sizes (``python3 -m pytest -m gpu tests/gate/test_rows_loop_transpose_gpu.py``), and a
tile read back without the swap of its indices is refused by the same verify. The
bounds-checked loop of a height x width matrix goes through tile_rows_loop_transpose the
same way. The row index declared before the column goes through tile_transpose and
rows_per_thread_transpose (the decl_order isomorphism) and is verified the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.pipeline import apply_rules, spec_of
from klc.rule import RuleSet

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
CASES = [("rows_loop_tile_transpose", "macros_32x8.cu"),
         ("rows_loop_tile_transpose", "blockdim_16x4.cu"),
         ("rows_loop_tile_transpose", "transpose_rows_loop_v02.cu"),
         ("tile_rows_loop_transpose", "rows_loop_width_height.cu")]
IDS = [name for _, name in CASES]


def _apply(source: bytes, name: str, rule: str) -> bytes:
    rules = [r for r in RuleSet.load([str(ROOT / "skills")]).rules if r.name == rule]
    assert len(rules) == 1, rule
    unit = parse_bytes(source, name)
    out = apply_rules(unit, rules, {}, spec_of(unit), clang=False)
    assert out.changed, [s.reason for s in out.refused]
    return out.source


def staged(skill: str, name: str) -> bytes:
    """The case through ``skill`` (the tile) and then pad_smem_tile (its padding)."""
    tiled = _apply(read_source(GOLDEN / skill / name), name, skill)
    return _apply(tiled, name, "pad_smem_tile")


@pytest.mark.parametrize(("skill", "name"), CASES, ids=IDS)
def test_each_spelling_gets_the_padded_tile_and_compiles(skill: str, name: str) -> None:
    from klc.gate import gate

    out = staged(skill, name)
    assert out.startswith(read_source(GOLDEN / skill / name.replace(".cu", ".expected.cu"))
                          .split(b"__global__")[0])  # the spec and the comments are kept
    assert b"+ 1];" in out and out.count(b"__syncthreads();") == 1
    rec = gate(out, f"{name}:candidate", stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize(("skill", "name"), CASES, ids=IDS)
def test_on_a_gpu_each_staged_transpose_matches_its_original(skill: str, name: str) -> None:
    from klc.gate import gate

    rec = gate(staged(skill, name), f"{name}:candidate",
               reference=read_source(GOLDEN / skill / name),
               reference_path=str(GOLDEN / skill / name), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_on_a_gpu_a_tile_read_back_unswapped_is_refused() -> None:
    """The verify that passes the staged kernels catches a write phase that reads the tile
    as it was written (a copy of each tile, not its transpose)."""
    from klc.gate import gate

    skill, name = CASES[0]
    good = staged(skill, name)
    bad = good.replace(b"tile[threadIdx.x][threadIdx.y + j]", b"tile[threadIdx.y + j][threadIdx.x]")
    assert bad != good
    rec = gate(bad, f"{name}:wrong", reference=read_source(GOLDEN / skill / name),
               reference_path=str(GOLDEN / skill / name), stages=("compile", "verify"))
    assert rec.verdict != "passed"


# the row index declared before the column (the decl_order isomorphism): the skills that
# declare the column first take them, and write the column first
ROW_FIRST = [("tile_transpose", "transpose_row_declared_first.cu"),
             ("rows_per_thread_transpose", "transpose_32x8_row_first.cu")]


def row_first(skill: str, name: str) -> bytes:
    return _apply(read_source(GOLDEN / skill / name), name, skill)


@pytest.mark.parametrize(("skill", "name"), ROW_FIRST, ids=[n for _, n in ROW_FIRST])
def test_a_row_declared_first_is_rewritten_and_compiles(skill: str, name: str) -> None:
    from klc.gate import gate

    out = row_first(skill, name)
    assert out == read_source(GOLDEN / skill / name.replace(".cu", ".expected.cu"))
    rec = gate(out, f"{name}:candidate", stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize(("skill", "name"), ROW_FIRST, ids=[n for _, n in ROW_FIRST])
def test_on_a_gpu_a_row_declared_first_matches_its_original(skill: str, name: str) -> None:
    from klc.gate import gate

    rec = gate(row_first(skill, name), f"{name}:candidate",
               reference=read_source(GOLDEN / skill / name),
               reference_path=str(GOLDEN / skill / name), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason
