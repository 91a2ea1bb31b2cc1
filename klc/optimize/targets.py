"""What the loop works on: the current version of the kernel (``Version``), what one
proposal rewrites (``Target``: one site, or a skill at all its sites at once) and a gated
proposal (``Candidate``); the round's targets from its ranked sites (:func:`build_targets`)
and the static checks of a proposal for a target (:func:`check_target`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from klc.content import sha256
from klc.fill.trial import groupable, static_check, static_check_rule

if TYPE_CHECKING:
    from klc.cuda.model import Unit
    from klc.fill.trial import StaticCheck
    from klc.gate import GateRecord
    from klc.optimize.result import TrialLog
    from klc.pipeline import Site
    from klc.rule import Rule


@dataclass
class Version:
    """The kernel the loop is improving, and what the gate measured of it."""

    source: bytes
    unit: Unit
    spec: Any
    speedup: float  # vs the original
    median_ms: float | None
    noise: float
    pct_of_sol: float | None

    @property
    def sha(self) -> str:
        return sha256(self.source)


@dataclass
class Target:
    """What one proposal rewrites: one site, or (``group`` > 1) the rule at each of its
    ``group`` sites at once. ``site`` is the first one (the filler's context)."""

    site: Site
    key: tuple[str, str, int]  # history key: (rule, function, ordinal); ("*", rule, -1)
    single: bool  # the rule matched once in that function
    group: int = 1

    @property
    def rule(self) -> Rule:
        return self.site.rule

    @property
    def where(self) -> str:
        w = site_where(self.site)
        return w if self.group == 1 else f"{w} (+{self.group - 1} more sites)"

    @property
    def text(self) -> str:
        return "*" if self.group > 1 else _text_sha(self.site)

    @property
    def func(self) -> str:
        return _func_sha(self.site)


@dataclass
class Candidate:
    """A proposal for a target that went through the gate."""

    target: Target
    values: dict[str, str]
    source: bytes
    record: GateRecord
    log: TrialLog

    @property
    def site(self) -> Site:
        return self.target.site


def build_targets(sites: list[Site], split: set[str]) -> list[Target]:
    """Targets from ranked sites, in their order: a groupable rule with several sites is
    first tried at all of them at once (one trial, as an expert applies it and as a lineage
    step did); once that failed (its name in ``split``), its sites are tried one by one."""
    count: dict[tuple[str, str], int] = {}
    per_rule: dict[str, list[Site]] = {}
    keys = []
    for s in sites:
        k = (s.rule.name, s.function_name)
        keys.append((*k, count.get(k, 0)))
        count[k] = count.get(k, 0) + 1
        per_rule.setdefault(s.rule.name, []).append(s)
    out: list[Target] = []
    grouped: set[str] = set()
    for s, key in zip(sites, keys, strict=True):
        name = s.rule.name
        group = per_rule[name]
        if len(group) > 1 and groupable(s.rule) and name not in split:
            if name not in grouped:
                grouped.add(name)
                out.append(Target(group[0], ("*", name, -1), False, len(group)))
            continue
        out.append(Target(s, key, count[key[:2]] == 1))  # type: ignore[arg-type]
    return out


def check_target(unit: Unit, target: Target, values: dict[str, str], spec: Any,
                 arch: str) -> StaticCheck:
    """The static checks of one proposal for a target (one site, or the rule everywhere)."""
    if target.group > 1:
        return static_check_rule(unit, target.rule, values, spec, arch)
    return static_check(unit, target.site, values, spec, arch)


def site_where(site: Site) -> str:
    return site.match.unit.where(site.match.start)


def _text_sha(site: Site) -> str:
    m = site.match
    return sha256(m.unit.source[m.start:m.end])[:16]


def _func_sha(site: Site) -> str:
    """The enclosing function's text (the whole file's, for a match outside any function)."""
    m = site.match
    f = m.function
    text = m.unit.source[f.start:f.end] if f is not None else m.unit.source
    return sha256(text)[:16]
