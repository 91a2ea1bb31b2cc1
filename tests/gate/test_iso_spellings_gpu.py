"""thread_per_row_to_warp_per_row through the matcher's isomorphisms: the
golden cases spell the row kernel as people do (the global index in any order, ++c / c += 1
/ c = c + 1, bare loop bodies, mirrored bounds, the maximum with an if, a ternary or max(),
acc = acc + e, early returns). The rewrite is the skill's template; on a GPU the gate
compiles and verifies each against its original at the spec's sizes, so an isomorphism that
matched code it is not equivalent to would fail here (``python3 -m pytest -m gpu
tests/gate/test_iso_spellings_gpu.py``). The same for naive_matmul_to_shared_tiles on a
product whose threads outside the matrix return early."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.pipeline import apply_rules, spec_of
from klc.rule import RuleSet

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "thread_per_row_to_warp_per_row"
RULE = "thread_per_row_to_warp_per_row"
SPELLINGS = ["row_sum_sq_terms_reversed.cu", "row_max_factors_swapped.cu", "row_max_ternary.cu",
             "row_max_max_call.cu", "row_mean_mirrored.cu", "row_max_parenthesized.cu",
             "row_sum_early_return.cu", "row_max_early_return_braced.cu",
             "row_l2_early_return_not.cu"]


def rewritten(name: str) -> bytes:
    rules = [r for r in RuleSet.load([str(ROOT / "skills")]).rules if r.name == RULE]
    unit = parse_bytes(read_source(GOLDEN / name), name)
    out = apply_rules(unit, rules, {"lane": "lane"}, spec_of(unit), clang=False)
    assert out.changed, [s.reason for s in out.refused]
    return out.source


@pytest.mark.parametrize("name", SPELLINGS)
def test_each_spelling_is_rewritten_as_its_golden_case(name: str) -> None:
    assert rewritten(name) == read_source(GOLDEN / name.replace(".cu", ".expected.cu"))


@pytest.mark.gpu
@pytest.mark.parametrize("name", SPELLINGS)
def test_on_a_gpu_each_rewritten_spelling_matches_its_original(name: str) -> None:
    from klc.gate import gate

    rec = gate(rewritten(name), f"{name}:candidate", reference=read_source(GOLDEN / name),
               reference_path=str(GOLDEN / name), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


MATMUL = ROOT / "tests" / "golden" / "naive_matmul_to_shared_tiles" / "matmul_early_exit.cu"


def _tiled_early_exit() -> bytes:
    rules = [r for r in RuleSet.load([str(ROOT / "skills")]).rules
             if r.name == "naive_matmul_to_shared_tiles"]
    unit = parse_bytes(read_source(MATMUL), str(MATMUL))
    out = apply_rules(unit, rules, {}, spec_of(unit), clang=False)
    assert out.changed, [s.reason for s in out.refused]
    return out.source


def test_a_product_with_an_early_return_is_tiled_and_compiles() -> None:
    """The early return of a one-if anchor (``if (r >= M || c >= N) return;`` and the rest
    of the body): the tiled kernel is the golden one, and NVRTC compiles it."""
    from klc.gate import gate

    out = _tiled_early_exit()
    assert out == read_source(MATMUL.with_name("matmul_early_exit.expected.cu"))
    rec = gate(out, "matmul_early_exit:candidate", stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason


@pytest.mark.gpu
def test_on_a_gpu_the_tiled_early_return_product_matches_its_original() -> None:
    from klc.gate import gate

    rec = gate(_tiled_early_exit(), "matmul_early_exit:candidate",
               reference=read_source(MATMUL), reference_path=str(MATMUL),
               stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason
