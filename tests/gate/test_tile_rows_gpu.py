"""Rows and columns per thread on a GPU: every golden rewrite of the transpose and row-copy
skills with a klc-spec computes what its original computes (a width of 101 and rows that
start unaligned take the scalar path of row_copy_vec4), so do the transfer kernels through
each skill chain, and the shapes the guards refuse would be wrong
(``python3 -m pytest -m gpu tests/gate/test_tile_rows_gpu.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source

ROOT = Path(__file__).resolve().parents[2]
SKILLS = ("tile_rows_per_thread", "rows_per_thread_transpose", "tile_rows_loop_transpose",
          "row_copy_vec4", "row_copy_vec4_rows_first", "block_extents_to_constant_bounds")
CASES = sorted(p for d in SKILLS for p in (ROOT / "tests" / "golden" / d).glob("*.expected.cu")
               if b"/* klc-spec" in p.with_name(p.name.replace(".expected.cu", ".cu")).read_bytes())


def verify(candidate: bytes, original: Path):  # type: ignore[no-untyped-def]
    from klc.gate import gate

    return gate(candidate, str(original), reference=read_source(original),
                reference_path=str(original), stages=("compile", "verify"))


def chain(path: Path, steps: list[tuple[str, dict[str, str]]]) -> bytes:
    from klc.pipeline import apply_rules, spec_of
    from klc.rule import RuleSet

    rules = {r.name: r for r in RuleSet.load([str(ROOT / "skills")]).rules}
    src = read_source(path)
    for name, holes in steps:
        unit = parse_bytes(src, str(path))
        out = apply_rules(unit, [rules[name]], holes, spec_of(unit))
        assert out.changed, name
        src = out.source
    return src


@pytest.mark.gpu
@pytest.mark.parametrize("expected", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_golden_rewrite_matches_its_original(expected: Path) -> None:
    original = expected.with_name(expected.name.replace(".expected.cu", ".cu"))
    rec = verify(read_source(expected), original)
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("v", ["1", "2", "4"])
def test_index_select_rows_with_v_groups(v: str) -> None:
    path = ROOT / "bench/transfer/index_select_rows.cu"
    rec = verify(chain(path, [("row_copy_vec4", {"v": v})]), path)
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("steps", [
    # the 16 x 16 first version: grown to 32 x 32, tiled, four rows per thread, padded
    [("grow_block_2d_cols_first", {"s": "2"}), ("tile_transpose", {"t": "32"}),
     ("tile_rows_per_thread", {"factor": "4"}), ("pad_smem_tile", {})],
    # kept at 16 x 16: a 16 x 16 tile, 16 x 8 threads
    [("tile_transpose", {"t": "16"}), ("tile_rows_per_thread", {"factor": "2"})],
    # the transpose_tile_bounds recipe: the loops' bounds the block's constants, 32 and 8
    [("grow_block_2d_cols_first", {"s": "2"}), ("tile_transpose", {"t": "32"}),
     ("tile_rows_per_thread", {"factor": "4"}), ("block_extents_to_constant_bounds", {}),
     ("pad_smem_tile", {})],
], ids=["grown", "kept", "constant_bounds"])
def test_transpose_2d_through_the_tile_chains(steps: list[tuple[str, dict[str, str]]]) -> None:
    path = ROOT / "bench/transfer/transpose_2d.cu"
    rec = verify(chain(path, steps), path)
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_constant_bounds_on_a_block_they_do_not_name_are_found_wrong() -> None:
    """block_extents_to_constant_bounds refuses a kernel launched with two blocks (32 x 8 and
    32 x 4: two_launches.why); the bounds 32 and 8 on the 32 x 4 block copy half the tile."""
    path = ROOT / "tests/golden/block_extents_to_constant_bounds/transpose_2d_tiled.cu"
    good = read_source(path.with_name("transpose_2d_tiled.expected.cu")).decode()
    bad = good.replace('block: ["(16) * 2", "ceil_div((16) * 2, 4)"]',
                       'block: ["(16) * 2", "ceil_div((16) * 2, 8)"]')
    assert bad != good
    rec = verify(bad.encode(), path)
    assert rec.verdict == "failed" and "verify" in rec.reason, rec.reason


@pytest.mark.gpu
def test_a_grid_short_of_the_groups_is_found_wrong() -> None:
    path = ROOT / "bench/transfer/index_select_rows.cu"
    good = chain(path, [("row_copy_vec4", {"v": "2"})]).decode()
    bad = good.replace('"ceil_div(ceil_div(ceil_div(width, 32), 2), 4)"',
                       '"ceil_div(ceil_div(ceil_div(width, 32), 2), 8)"')
    assert bad != good
    rec = verify(bad.encode(), path)
    assert rec.verdict == "failed" and "verify" in rec.reason, rec.reason


@pytest.mark.gpu
def test_rows_that_do_not_divide_the_tile_are_found_wrong() -> None:
    """rows_per_thread_transpose refuses a 32 x 12 block (12 does not divide 32); the tiled
    loop it would lead to walks tile rows past the tile's edge there."""
    path = ROOT / "tests/golden/tile_rows_loop_transpose/transpose_rows_loop.cu"
    good = read_source(path.with_name("transpose_rows_loop.expected.cu")).decode()
    bad = good.replace("template: {TILE: 32, ROWS: 8}", "template: {TILE: 32, ROWS: 12}")
    assert bad != good
    rec = verify(bad.encode(), path)
    assert rec.verdict == "failed", rec.reason
