"""Why the shared-memory float4 skills carry ``element_aligned``: on a tile whose rows are
padded (129 floats, 516 bytes), ``&t[r][tid * 4]`` is 16-byte aligned only for even rows.
The guard refuses there and holds on the unpadded tile (checked without a GPU); on a GPU
the unpadded rewrite passes the gate, and the same rewrite forced onto the padded tile (the
rule without its alignment guard) faults with a misaligned access, which the gate reports
as the candidate's failure (``python3 -m pytest -m gpu tests/gate/test_alignment_gpu.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.rule import RuleSet, load_rules_text

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parents[1] / "data" / "align"
RULE = "vectorize_shared_float4_load"


def skill() -> object:
    rules = [r for r in RuleSet.load([str(ROOT / "skills")]).rules if r.name == RULE]
    assert len(rules) == 1
    return rules[0]


def rewritten(path: Path, rule: object) -> bytes:
    unit = parse_bytes(read_source(path), str(path))
    out = apply_rules(unit, [rule], None, spec_of(unit), clang=False)  # type: ignore[list-item]
    assert out.changed, [s.reason for s in out.refused]
    return out.source


def unguarded() -> object:
    """The skill as it was before it had the alignment guard."""
    text = (ROOT / "skills" / "vectorize.rule").read_text()
    rules = [r for r in load_rules_text(text.replace(
        "guard: is_identifier($V) and element_aligned($S, $I, 16)", "guard: is_identifier($V)"),
        "vectorize.rule") if r.name == RULE]
    assert rules and "element_aligned" not in str(rules[0].guard)
    return rules[0]


def test_the_guard_refuses_the_padded_tile_and_holds_on_the_unpadded_one() -> None:
    rule = skill()
    padded = parse_bytes(read_source(DATA / "tile_rows.cu"), "tile_rows.cu")
    sites = find_sites(padded, [rule], None, spec_of(padded), clang=False)  # type: ignore[list-item]
    assert [(s.ok, s.stage) for s in sites] == [(False, "guard")]
    assert "`&t[r][tid * 4]` is only known to be 4-byte aligned, not 16" in sites[0].reason
    assert "`r` × 516 B" in sites[0].reason
    new = rewritten(DATA / "tile_rows_unpadded.cu", rule)
    assert b"*reinterpret_cast<const float4*>(&t[r][tid * 4])" in new
    forced = rewritten(DATA / "tile_rows.cu", unguarded())
    assert b"*reinterpret_cast<const float4*>(&t[r][tid * 4])" in forced


@pytest.mark.gpu
def test_on_a_gpu_the_aligned_rewrite_passes_and_the_forced_one_faults() -> None:
    from klc.gate import gate

    for name, rule, passes in (("tile_rows_unpadded.cu", skill(), True),
                               ("tile_rows.cu", unguarded(), False)):
        original = read_source(DATA / name)
        candidate = rewritten(DATA / name, rule)
        rec = gate(candidate, f"{name}:candidate", reference=original,
                   reference_path=str(DATA / name), stages=("compile", "verify"))
        if passes:
            assert rec.verdict == "passed", rec.reason
        else:
            assert rec.verdict == "failed", rec.reason
            reason = rec.stages["verify"].reason
            assert "CUDA error in the candidate run" in reason, reason
            assert "misaligned address" in reason.lower(), reason  # (the error, not the hint)
