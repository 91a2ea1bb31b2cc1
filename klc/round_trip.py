"""A learned skill applied where its step happened: the round trip of a walk's step (the
skill on version N at the step's sites gives version N - 1 back, ``apply_at_step``) and the
golden cases ``klc learn --golden`` writes from it (``golden_cases``, ``write_golden``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from klc.errors import KlcError
from klc.reverse import Inverse, Learned, observed_holes


def step_sites(inv: Inverse, unit: Any, step: dict[str, Any], holes: dict[str, str],
               spec: Any) -> list[Any]:
    """The skill's sites in version N that correspond to the step's sites: where the
    replacement starts, or else the match binding the same code nearest to where it was."""
    from klc.pipeline import find_sites

    found = find_sites(unit, [inv.rule], holes, spec)
    out = []
    for s in step.get("sites", []):
        at = s.get("new_offset")
        pick = next((f for f in found if at is not None and f.match.start == at), None)
        if pick is None:
            same = [f for f in found if all(
                " ".join(f.match.bindings[m].text.split())
                == " ".join(s["bindings"][m]["text"].split())
                for m in inv.anchor_metavars if m in s["bindings"] and m in f.match.bindings)]
            same.sort(key=lambda f: abs(f.match.start - s["start"]))
            pick = same[0] if same else None
        if pick is None:
            raise KlcError(f"the skill {inv.rule.name} does not match where step "
                           f"{step.get('index')} rewrote {s.get('line')}:{s.get('col')}")
        if pick not in out:
            out.append(pick)
    return out


def apply_at_step(inv: Inverse, source: bytes, path: str, step: dict[str, Any],
                  holes: dict[str, str] | None = None) -> bytes:
    """Apply the skill to version N at the step's sites, with the observed hole values
    (or ``holes``): the round trip gives back version N - 1."""
    from klc.cuda.parse import parse_bytes
    from klc.pipeline import apply_rules, apply_site, spec_of

    unit = parse_bytes(source, path)
    spec = spec_of(unit)
    values = holes if holes is not None else observed_holes(inv, step)
    sites = step_sites(inv, unit, step, values, spec)
    refused = [s for s in sites if not s.ok]
    if refused:
        raise KlcError(f"the skill {inv.rule.name} is refused at {unit.where(refused[0].match.start)}: "  # noqa: E501
                       f"{refused[0].reason}")
    if len(sites) == 1 and not inv.rule.changes_launch:
        outcome = apply_site(unit, sites[0], values, spec)
    else:
        outcome = apply_rules(unit, [inv.rule], values, spec)
    return outcome.source



@dataclass(frozen=True)
class GoldenCase:
    """A golden test of a learned skill: its first step's version N in, what the skill makes
    of it (every site, as ``klc test`` applies it) expected; ``back`` says whether that is
    version N - 1 byte for byte."""

    skill: str
    name: str
    source: bytes
    holes: dict[str, str]
    expected: bytes
    back: bool


def golden_cases(learned: list[Learned]) -> tuple[list[GoldenCase], list[str]]:
    """One case per skill, from its first observation, and notes on the skills that get
    none: a skill that changes its own output again (``klc test`` requires a fixed point).
    A skill that does not apply to its own step is an error (nothing is written)."""
    from klc.cuda.parse import parse_bytes
    from klc.pipeline import apply_rules, spec_of

    cases: list[GoldenCase] = []
    notes: list[str] = []
    for item in learned:
        o = item.observations[0]
        path = o.directory / o.version["file"]
        try:
            source = path.read_bytes()
            before = (o.directory / o.before["file"]).read_bytes()
        except OSError as e:
            raise KlcError(f"{path}: cannot read the version: {e.strerror or e}") from None
        holes = observed_holes(item.inverse, o.step)
        unit = parse_bytes(source, str(path))
        out = apply_rules(unit, [item.rule], holes, spec_of(unit))
        if not out.changed:
            why = "; ".join(s.reason for s in out.refused) or "no match"
            raise KlcError(f"{item.rule.name} does not apply to the version its step made "
                           f"({path}): {why}")
        again = apply_rules(parse_bytes(out.source, str(path)), [item.rule], holes,
                            spec_of(parse_bytes(out.source, str(path))))
        if again.changed:
            notes.append(f"{item.rule.name}: no golden case: applied to its own output on "
                         f"{path} it changes the code again (its guard does not exclude the "
                         "code it produces)")
            continue
        name = f"{o.lineage['family']}_{Path(o.version['file']).stem.split('_', 1)[0]}"
        cases.append(GoldenCase(item.rule.name, name, source, holes, out.source,
                                out.source == before))
    return cases, notes


def write_golden(cases: list[GoldenCase], directory: str | Path) -> list[Path]:
    """Write the cases as ``DIR/<skill>/<case>.cu`` (+ ``.holes``, ``.expected.cu``)."""
    from klc.fsutil import atomic_write

    root = Path(directory)
    if not root.is_dir():
        raise KlcError(f"{directory}: no such folder")
    written = []
    for c in cases:
        d = root / c.skill
        d.mkdir(exist_ok=True)
        atomic_write(d / f"{c.name}.cu", c.source)
        atomic_write(d / f"{c.name}.expected.cu", c.expected)
        written += [d / f"{c.name}.cu", d / f"{c.name}.expected.cu"]
        holes = d / f"{c.name}.holes"
        if c.holes:
            atomic_write(holes, "".join(f"{k}={v}\n" for k, v in c.holes.items()).encode())
            written.append(holes)
        elif holes.exists():
            holes.unlink()
    return written
