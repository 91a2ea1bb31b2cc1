"""thread_per_row_to_warp_per_row on a softmax that normalises its output in place:
``lane_owned_updates`` lets the skill rewrite ``y[c] /= s`` in a loop it strides by
lane, where each element is updated by one lane once. On a GPU the gate compiles and
verifies each rewritten golden case against its original, at the spec's sizes; and the same
rewrite forced onto the cases the guard refuses (the rule without ``lane_owned_updates``), a
prefix sum reading its neighbour and a sum into one element of the row, fails verification:
the gate would catch a wrong relaxation (``python3 -m pytest -m gpu
tests/gate/test_warp_per_row_in_place_gpu.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.pipeline import apply_rules, spec_of
from klc.rule import RuleSet, load_rules_text

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "thread_per_row_to_warp_per_row"
RULE = "thread_per_row_to_warp_per_row"
ACCEPTED = ["softmax_star_pointers.cu", "softmax_if_max.cu", "softmax_matrix_index.cu",
            "softmax_early_return.cu"]
# refused cases whose forced rewrite is wrong whatever the lanes' timing: a prefix sum whose
# lanes read elements no lane has summed yet, and a sum into one element where the lanes'
# stores overwrite each other (an update that every lane repeats in step with the others,
# as unrolled_by_two's would be, can come out right on a converged warp: no test of it here)
REFUSED = ["prefix_sum_in_place.cu", "update_not_lane_owned.cu"]
GUARD = " and lane_owned_updates($$$BODY)"


def skill() -> object:
    rules = [r for r in RuleSet.load([str(ROOT / "skills")]).rules if r.name == RULE]
    assert len(rules) == 1
    return rules[0]


def unguarded() -> object:
    """The skill without any check of in-place updates."""
    text = (ROOT / "skills" / "row_kernels.rule").read_text()
    assert GUARD in text
    rules = [r for r in load_rules_text(text.replace(GUARD, ""), "row_kernels.rule")
             if r.name == RULE]
    assert rules and "lane_owned_updates" not in str(rules[0].guard)
    return rules[0]


def rewritten(path: Path, rule: object) -> bytes:
    unit = parse_bytes(read_source(path), str(path))
    out = apply_rules(unit, [rule], {"lane": "lane"}, spec_of(unit),  # type: ignore[list-item]
                      clang=False)
    assert out.changed, [s.reason for s in out.refused]
    return out.source


def test_the_skill_rewrites_the_accepted_cases_and_only_the_forced_rule_the_refused() -> None:
    for name in ACCEPTED:
        new = rewritten(GOLDEN / name, skill())
        assert new == read_source(GOLDEN / name.replace(".cu", ".expected.cu"))
        assert b" /= " in new or b" *= " in new or b" -= " in new  # (the update kept)
    for name in REFUSED:
        unit = parse_bytes(read_source(GOLDEN / name), name)
        out = apply_rules(unit, [skill()], {"lane": "lane"},  # type: ignore[list-item]
                          spec_of(unit), clang=False)
        assert not out.changed
        forced = rewritten(GOLDEN / name, unguarded())
        assert b"threadIdx.x % 32" in forced


@pytest.mark.gpu
@pytest.mark.parametrize("name", ACCEPTED)
def test_on_a_gpu_the_rewritten_softmax_matches_the_original(name: str) -> None:
    from klc.gate import gate

    original = read_source(GOLDEN / name)
    rec = gate(rewritten(GOLDEN / name, skill()), f"{name}:candidate", reference=original,
               reference_path=str(GOLDEN / name), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("name", REFUSED)
def test_on_a_gpu_the_rewrite_forced_onto_a_refused_case_fails(name: str) -> None:
    from klc.gate import gate

    original = read_source(GOLDEN / name)
    rec = gate(rewritten(GOLDEN / name, unguarded()), f"{name}:forced", reference=original,
               reference_path=str(GOLDEN / name), stages=("compile", "verify"))
    assert rec.verdict == "failed", rec.reason
    assert rec.stages["compile"].status == "passed", rec.reason  # (it compiles: wrong values)
    assert rec.stages["verify"].status == "failed", rec.reason
