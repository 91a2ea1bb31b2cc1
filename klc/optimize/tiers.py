"""Tier ranking: which sites a round tries, in which order and in which tiers
(:mod:`klc.optimize.headroom`), and what it left out (skills measured slower, structural
skills near the speed-of-light floor) for the report's notes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from klc.fill.trial import candidate_sites, is_slower, site_rank, slower_note
from klc.optimize import headroom
from klc.optimize.targets import site_where

if TYPE_CHECKING:
    from klc.cuda.model import Unit
    from klc.optimize.targets import Target
    from klc.pipeline import Site
    from klc.rule import Rule


class TierRanking:
    """The ranking of one run: by headroom (``by_headroom``) or by the cards alone. It
    keeps, for the report, the skills measured slower that were not tried (``skipped``),
    the structural skills left out near SOL (``left_out``), both by name, and each round's
    headroom and tiers (``rounds``)."""

    def __init__(self, rules: list[Rule], *, include_slower: bool, by_headroom: bool) -> None:
        self.rules = rules
        self.include_slower = include_slower
        self.by_headroom = by_headroom
        self.skipped: dict[str, dict[str, Any]] = {}
        self.left_out: dict[str, dict[str, Any]] = {}
        self.rounds: list[dict[str, Any]] = []

    def sites(self, unit: Unit, spec: Any, pct_of_sol: float | None) -> list[Site]:
        """The sites where a skill may apply, best first (a kernel at ``pct_of_sol``; None:
        unmeasured, the order of the mid regime)."""
        sites = candidate_sites(unit, self.rules, spec, include_slower=True)
        if not self.include_slower:
            sites = skip_slower(sites, self.skipped)
        if not self.by_headroom:
            return sorted(sites, key=site_rank)
        return sorted(sites, key=lambda s: headroom.site_key(s, pct_of_sol))

    def tiers(self, round_: int, pct_of_sol: float | None, targets: list[Target]
              ) -> list[list[Target]]:
        """The round's targets in the tiers of :func:`klc.optimize.headroom.tiers` (one
        tier, in rank order, without the headroom ranking); structural skills left out near
        SOL are recorded for the report."""
        if not self.by_headroom:
            return [targets]
        rules = list({t.rule.name: t.rule for t in targets}.values())
        groups, out = headroom.tiers(rules, pct_of_sol)
        for r in out:
            entry = self.left_out.setdefault(r.name, {
                "skill": r.name, "location": r.location, "reach": headroom.reach(r).describe(),
                "pct_of_sol": pct_of_sol, "sites": []})
            for t in targets:
                if t.rule.name == r.name and t.where not in entry["sites"]:
                    entry["sites"].append(t.where)
        self.rounds.append({
            "round": round_, "pct_of_sol": pct_of_sol,
            "regime": headroom.regime(pct_of_sol),
            "tiers": [[{"skill": r.name, "reach": headroom.reach(r).describe(),
                        "expected_gain": round(headroom.expected_gain(r, pct_of_sol), 3)}
                       for r in g] for g in groups],
            "left_out": [r.name for r in out]})
        tier_of = {r.name: i for i, g in enumerate(groups) for r in g}
        return [[t for t in targets if tier_of.get(t.rule.name) == i]
                for i in range(len(groups))]

    def near(self, pct_of_sol: float | None) -> bool:
        """Whether the run ranks by headroom and the kernel is near the floor (only cheap
        skills, no phase B)."""
        return self.by_headroom and headroom.regime(pct_of_sol) == "near"

    def skipped_notes(self) -> list[str]:
        """One note per skill measured slower that was not tried, with where it applied."""
        by_name = {r.name: r for r in self.rules}
        return [f"{slower_note(by_name[name])}; it applied at {', '.join(e['sites'])}"
                for name, e in self.skipped.items()]

    def none_applies(self) -> str:
        """Why nothing was tried on a kernel where no skill applies."""
        if not self.skipped:
            return "no skill applies"
        return (f"no skill applies but {len(self.skipped)} measured slower ("
                + ", ".join(self.skipped) + "; --include-slower tries them)")


def skip_slower(sites: list[Site], skipped: dict[str, dict[str, Any]]) -> list[Site]:
    """The sites of skills not measured slower; the others are recorded in ``skipped`` (by
    skill: its location and the sites where it applied), for the report's notes."""
    kept = []
    for s in sites:
        if not is_slower(s.rule):
            kept.append(s)
            continue
        entry = skipped.setdefault(s.rule.name, {"skill": s.rule.name,
                                                 "location": s.rule.location,
                                                 "verdict": s.rule.card.verdict, "sites": []})
        where = site_where(s)
        if where not in entry["sites"]:
            entry["sites"].append(where)
    return kept
