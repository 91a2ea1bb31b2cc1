"""Golden-file tests for rules, in the manner of Coccinelle's and ast-grep's test folders.

Layout: ``DIR/<rule>/<case>.cu`` is an input. Beside it, either

- ``<case>.expected.cu``: the rule must rewrite the input into exactly these bytes, and
  applying the rule again to that output must change nothing (idempotent in effect); or
- ``<case>.why``: the rule must refuse every match in the input, and some refusal reason
  must contain this file's text (the expected "why not"); or
- neither: the rule must find no match at all.

``<case>.holes`` (optional) holds ``name=value`` lines for the rule's holes. A case named
``*_failure.cu`` is a known failure: it is reported, and flagged when it starts passing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from klc.cuda.parse import parse_bytes, read_source
from klc.errors import KlcError
from klc.fsutil import atomic_write
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.rule import RuleSet, default_pass_dirs, default_skill_dirs


@dataclass(frozen=True)
class CaseResult:
    case: str
    ok: bool
    message: str = ""


def _holes(path: Path) -> dict[str, str]:
    holes: dict[str, str] = {}
    if path.exists():
        for n, line in enumerate(path.read_text().splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            name, sep, value = line.partition("=")
            if not sep:
                raise KlcError(f"{path}:{n}:1: expected name=value")
            holes[name.strip()] = value.strip()
    return holes


def run_case(rule_name: str, case: Path, rules: dict, update: bool) -> CaseResult:  # type: ignore[type-arg]
    label = f"{rule_name}/{case.name}"
    rule = rules.get(rule_name)
    if rule is None:
        return CaseResult(label, False, f"no rule named {rule_name} in the rule folders")
    stem = case.name[: -len(".cu")]
    expected = case.with_name(stem + ".expected.cu")
    why = case.with_name(stem + ".why")
    try:
        unit = parse_bytes(read_source(case), str(case))
        outcome = apply_rules(unit, [rule], _holes(case.with_name(stem + ".holes")),
                              spec_of(unit))
    except KlcError as e:
        return CaseResult(label, False, str(e))
    if why.exists():
        want = why.read_text().strip()
        if outcome.changed:
            return CaseResult(label, False, "expected a refusal, but the rule rewrote the file")
        reasons = [s.reason for s in outcome.refused] + [why for _s, why in outcome.skipped]
        if not any(want in r for r in reasons):
            return CaseResult(label, False, f"expected a refusal containing {want!r}, got "
                              f"{reasons or 'no match at all'}")
        return CaseResult(label, True)
    if not expected.exists():
        if update and outcome.changed:
            atomic_write(expected, outcome.source)
            return CaseResult(label, True, "expected output written")
        if outcome.changed:
            return CaseResult(label, False, "the rule rewrote a case that has no "
                              ".expected.cu (run with --update-golden to accept)")
        if outcome.refused:
            return CaseResult(label, False, "the rule refused a match but the case has no "
                              f".why: {outcome.refused[0].reason}")
        return CaseResult(label, True)
    if not outcome.changed:
        reasons = "; ".join([s.reason for s in outcome.refused]
                            + [why for _s, why in outcome.skipped]) or "no match"
        return CaseResult(label, False, f"expected a rewrite, got none ({reasons})")
    if outcome.source != expected.read_bytes():
        if update:
            atomic_write(expected, outcome.source)
            return CaseResult(label, True, "expected output updated")
        return CaseResult(label, False, f"output differs from {expected.name}")
    again = find_sites(parse_bytes(outcome.source, str(expected)), [rule])
    if any(s.ok for s in again):
        return CaseResult(label, False, "not idempotent: the rule applies again to its own "
                          "output")
    return CaseResult(label, True)


def run_golden(folder: str, rule_paths: list[str] | None,
               update: bool = False) -> list[CaseResult]:
    root = Path(folder)
    if not root.is_dir():
        raise KlcError(f"{folder}: no such test folder")
    rules = {r.name: r for r in RuleSet.load(rule_paths or
                                             default_pass_dirs() + default_skill_dirs()).rules}
    results: list[CaseResult] = []
    # a folder of rule folders (tests/golden), or one rule's folder (tests/golden/<rule>)
    one = root.resolve().name in rules and any(root.glob("*.cu"))
    for rule_dir in [root] if one else sorted(p for p in root.iterdir() if p.is_dir()):
        for case in sorted(rule_dir.glob("*.cu")):
            if case.name.endswith(".expected.cu"):
                continue
            r = run_case(rule_dir.name, case, rules, update)
            if case.stem.endswith("_failure"):
                r = (CaseResult(r.case, True, "known failure")
                     if not r.ok else CaseResult(r.case, False, "known failure now passes: "
                                                 "rename the case"))
            results.append(r)
    if not results:
        raise KlcError(f"{folder}: no golden cases found (<rule>/<case>.cu, or <case>.cu in "
                       "a folder named after its rule)")
    return results
