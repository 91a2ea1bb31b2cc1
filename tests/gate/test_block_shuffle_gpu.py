"""A block sum by warp shuffles against its shared-memory tree, both ways.

Forward, ``shared_tree_to_warp_shuffles`` and ``shared_tree_to_warp_shuffles_total`` (the
total left in sdata[0] for the block; skills/block_shuffle.rule) on the sequential shared
tree in the spellings of public reduction kernels (their golden cases: a templated
BLOCK_SIZE, a #define, blockDim.x with the spec's block, an extern shared array, int and
unsigned thread indices, a sum of squares, a block mean every thread reads), and after
``interleaved_tree_to_sequential`` on the textbook interleaved tree (the block_sum_shuffle
walk's naive end); backward, ``shuffle_warp_sums_to_shared_tree`` and
``shuffle_block_total_to_shared_tree`` (passes/block_shuffle.rule) on shuffle reductions
spelled with a FULL_MASK macro, warpSize and an unsigned mask. Here the rewrites are
compared with their golden outputs and compiled with NVRTC; on a GPU the gate verifies each
against its original at the spec's sizes (``python3 -m pytest -m gpu
tests/gate/test_block_shuffle_gpu.py``), so a guard that let through a block whose shuffle
form adds other values (a warp that is not whole, a tree over part of the block, a cell read
afterwards) fails here."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.pipeline import apply_rules, spec_of
from klc.rule import RuleSet

ROOT = Path(__file__).resolve().parents[2]
SKILL = "shared_tree_to_warp_shuffles"
PASS = "shuffle_warp_sums_to_shared_tree"
TOTAL_SKILL = "shared_tree_to_warp_shuffles_total"
TOTAL_PASS = "shuffle_block_total_to_shared_tree"
# (rule, golden case): the skills' cases, then the passes'
FORWARD = [(SKILL, c) for c in ("template_block_size.cu", "define_block_int_tid.cu",
                                "blockdim_spec_block.cu", "sum_of_squares.cu",
                                "extern_shared_array.cu")] \
    + [(TOTAL_SKILL, c) for c in ("block_mean_broadcast.cu", "template_total_by_thread0.cu")]
BACKWARD = [(PASS, "full_mask_macro_warp_size.cu"), (PASS, "unsigned_mask_template.cu"),
            (TOTAL_PASS, "block_center_warp_size.cu")]
NAIVE = ROOT / "bench" / "lineages" / "block_sum_shuffle" / "walk" / "v03_remove_const_param.cu"


def _rules(folder: str, *names: str) -> list:
    loaded = RuleSet.load([str(ROOT / folder)]).rules
    return [next(r for r in loaded if r.name == name) for name in names]


def _apply(path: Path, rules: list) -> bytes:
    unit = parse_bytes(read_source(path), str(path))
    out = apply_rules(unit, rules, {}, spec_of(unit), clang=False)
    assert out.changed, [s.reason for s in out.refused]
    return out.source


def forward(rule: str, name: str) -> bytes:
    return _apply(ROOT / "tests" / "golden" / rule / name, _rules("skills", rule))


def backward(rule: str, name: str) -> bytes:
    return _apply(ROOT / "tests" / "golden" / rule / name, _rules("passes", rule))


def naive_to_shuffles() -> bytes:
    """The walk's naive end (interleaved addressing) given sequential addressing, then warp
    shuffles: the two skills one after the other, as a recipe replays them."""
    sequential = _apply(NAIVE, _rules("skills", "interleaved_tree_to_sequential"))
    unit = parse_bytes(sequential, str(NAIVE))
    out = apply_rules(unit, _rules("skills", SKILL), {}, spec_of(unit), clang=False)
    assert out.changed, [s.reason for s in out.refused]
    return out.source


@pytest.mark.parametrize(("rule", "name"), FORWARD)
def test_the_skills_write_each_golden_shuffle_reduction(rule: str, name: str) -> None:
    golden = ROOT / "tests" / "golden" / rule / name
    assert forward(rule, name) == read_source(golden.with_name(name.replace(".cu",
                                                                            ".expected.cu")))


@pytest.mark.parametrize(("rule", "name"), BACKWARD)
def test_the_passes_write_each_golden_shared_tree(rule: str, name: str) -> None:
    golden = ROOT / "tests" / "golden" / rule / name
    assert backward(rule, name) == read_source(golden.with_name(name.replace(".cu",
                                                                             ".expected.cu")))


def test_the_interleaved_tree_reaches_the_shuffles_and_compiles() -> None:
    """interleaved_tree_to_sequential, then the skill: the textbook first version ends as the
    expert's shuffle reduction (its float local, the warp sums in sdata, thread 0 storing from
    the register), and NVRTC compiles it."""
    from klc.gate import gate

    out = naive_to_shuffles().decode()
    assert "__shfl_down_sync" in out and "% (2 *" not in out
    assert "g_odata[blockIdx.x] = sum;" in out and "sdata[tid / 32] = sum;" in out
    rec = gate(out.encode(), "block_sum_shuffle:candidate", stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize(("rule", "name"), FORWARD)
def test_on_a_gpu_each_shuffle_rewrite_matches_its_shared_tree(rule: str, name: str) -> None:
    from klc.gate import gate

    original = ROOT / "tests" / "golden" / rule / name
    rec = gate(forward(rule, name), f"{name}:candidate", reference=read_source(original),
               reference_path=str(original), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize(("rule", "name"), BACKWARD)
def test_on_a_gpu_each_shared_tree_matches_its_shuffle_reduction(rule: str, name: str) -> None:
    from klc.gate import gate

    original = ROOT / "tests" / "golden" / rule / name
    rec = gate(backward(rule, name), f"{name}:candidate", reference=read_source(original),
               reference_path=str(original), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_on_a_gpu_the_interleaved_tree_and_its_shuffles_agree() -> None:
    from klc.gate import gate

    rec = gate(naive_to_shuffles(), "block_sum_shuffle:candidate",
               reference=read_source(NAIVE), reference_path=str(NAIVE),
               stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason
