"""checked_window_to_interior_path on a GPU: every golden rewrite (8-bit and float images,
radius 1 and 2, an if block and an early return; verified at odd sizes, images smaller
than the window among them), the rewrite of the first-image-kernel spelling
bench/spellings/mean_filter_u8.cu and the window_interior_checked expert against its
walk's first version compute what their originals compute; an interior path that takes in
the left border column is found wrong by the gate, so the verification would catch an
interior condition that lets a pixel skip a check that fails
(``python3 -m pytest -m gpu tests/gate/test_window_interior_checked_gpu.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source

ROOT = Path(__file__).resolve().parents[2]
SKILL = "checked_window_to_interior_path"
GOLDEN = ROOT / "tests" / "golden" / SKILL
CASES = sorted(GOLDEN.glob("*.expected.cu"))
SPELLING = ROOT / "bench" / "spellings" / "mean_filter_u8.cu"
WALK = ROOT / "bench" / "lineages" / "window_interior_checked" / "walk"
INTERIOR = b"if (row >= R && row < H - R && col >= R && col < W - R) {"


def _rewritten_spelling() -> bytes:
    import klc.plugins
    from klc.pipeline import apply_rules, spec_of
    from klc.rule import RuleSet

    klc.plugins.load()
    rule = next(r for r in RuleSet.load([str(ROOT / "skills")]).rules if r.name == SKILL)
    unit = parse_bytes(read_source(SPELLING), str(SPELLING))
    out = apply_rules(unit, [rule], spec=spec_of(unit), clang=False)
    assert out.changed, [s.reason for s in out.refused]
    return out.source


def test_the_cases_are_there_and_the_spelling_is_split() -> None:
    assert {p.name for p in CASES} == {"mean_u8_r1_if_block.expected.cu",
                                       "mean_u8_r2_early_return.expected.cu",
                                       "mean_f32_r2_early_return.expected.cu"}
    out = _rewritten_spelling()
    assert out.count(INTERIOR) == 1
    # the border keeps the checked loops, the interior has no check
    assert out.count(b"if (r >= 0 && r < H && c >= 0 && c < W) {") == 1


def test_the_rewritten_spelling_compiles() -> None:
    from klc.gate import gate

    rec = gate(_rewritten_spelling(), "mean_filter_u8_interior.cu", stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("expected", CASES, ids=lambda p: p.name)
def test_each_golden_rewrite_matches_its_original(expected: Path) -> None:
    from klc.gate import gate

    original = expected.with_name(expected.name.replace(".expected.cu", ".cu"))
    rec = gate(read_source(expected), f"{expected}", reference=read_source(original),
               reference_path=str(original), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_the_rewritten_spelling_matches_the_original() -> None:
    from klc.gate import gate

    rec = gate(_rewritten_spelling(), "mean_filter_u8_interior.cu",
               reference=read_source(SPELLING), reference_path=str(SPELLING),
               stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_the_expert_matches_its_checked_first_version() -> None:
    from klc.gate import gate

    first = WALK / "v02_remove_const_param.cu"
    rec = gate(read_source(WALK / "v00_expert.cu"), "window_interior_checked_expert.cu",
               reference=read_source(first), reference_path=str(first),
               stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_an_interior_that_takes_in_the_left_column_is_wrong() -> None:
    """col >= 0 in place of col >= R (and row >= R + 1, so that every read stays inside the
    buffer): the pixels of the left border column then add the last pixel of the row above
    each window row and count nine pixels, not six."""
    from klc.gate import gate

    good = _rewritten_spelling()
    bad = good.replace(INTERIOR, b"if (row >= R + 1 && row < H - R && col >= 0 && col < W - R) {")
    assert bad != good
    rec = gate(bad, "mean_filter_u8_bad.cu", reference=read_source(SPELLING),
               reference_path=str(SPELLING), stages=("compile", "verify"))
    assert rec.verdict == "failed" and "verify" in rec.reason, rec.reason
