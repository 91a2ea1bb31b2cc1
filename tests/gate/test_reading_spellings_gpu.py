"""The spellings that klc.match.reading, chain_order and the rereading of misread comparisons
let a pass or a skill take, against their originals.

Backward: the block sum and the block maximum by warp shuffles in the spellings of public
kernels (the lane and the warp in locals or inline, each warp's shuffles in a ``__device__``
helper, warpSize or a WARP_SIZE macro, max() or fmaxf, warp 0 padded with -INFINITY or with 0
for fabsf values) walked to the shared tree (passes/block_shuffle.rule). Forward: the 8-bit
blur whose neighbour check comes columns first, or as ``curRow > -1`` (which tree-sitter-cuda
reads as a template's arguments), tiled by checked_window_to_zero_fill_halo_tile. Here each
rewrite is compared with its golden output and compiled with NVRTC; on a GPU the gate
verifies each against its original at the spec's sizes (``python3 -m pytest -m gpu
tests/gate/test_reading_spellings_gpu.py``): a reading that took a local, a helper or a
condition for what it is not would give other results there."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.pipeline import apply_rules, spec_of
from klc.rule import RuleSet

ROOT = Path(__file__).resolve().parents[2]
CASES = [
    ("passes", "shuffle_lane_sums_to_shared_tree", "lane_warp_helper.cu"),
    ("passes", "shuffle_lane_sums_to_shared_tree", "inline_macro_warp_size.cu"),
    ("passes", "shuffle_warp_sums_to_shared_tree", "lane_local_and_helper.cu"),
    ("passes", "shuffle_warp_max_to_shared_tree", "absmax_lane_helper.cu"),
    ("passes", "shuffle_warp_max_to_shared_tree", "max_minus_infinity.cu"),
    ("skills", "checked_window_to_zero_fill_halo_tile", "blur_u8_columns_checked_first.cu"),
    ("skills", "checked_window_to_zero_fill_halo_tile", "blur_u8_minus_one_bounds.cu"),
]


def rewrite(folder: str, rule: str, name: str) -> bytes:
    path = ROOT / "tests" / "golden" / rule / name
    rules = [r for r in RuleSet.load([str(ROOT / folder)]).rules if r.name == rule]
    unit = parse_bytes(read_source(path), str(path))
    out = apply_rules(unit, rules, {}, spec_of(unit))
    assert out.changed, [s.reason for s in out.refused]
    return out.source


@pytest.mark.parametrize(("folder", "rule", "name"), CASES)
def test_each_spelling_is_rewritten_as_its_golden_output_and_compiles(
        folder: str, rule: str, name: str) -> None:
    from klc.gate import gate

    golden = ROOT / "tests" / "golden" / rule / name
    out = rewrite(folder, rule, name)
    assert out == read_source(golden.with_name(name.replace(".cu", ".expected.cu")))
    rec = gate(out, f"{name}:candidate", stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize(("folder", "rule", "name"), CASES)
def test_on_a_gpu_each_rewrite_matches_its_original(folder: str, rule: str, name: str) -> None:
    from klc.gate import gate

    original = ROOT / "tests" / "golden" / rule / name
    rec = gate(rewrite(folder, rule, name), f"{name}:candidate",
               reference=read_source(original), reference_path=str(original),
               stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason
