"""Recipe replay: the lineage recipes (``klc.recipes``) replayed from the current version as
one move each, each tried once per version, and the round's own moves that may beat the
recipe's kernel (:meth:`klc.optimize.loop._Loop.compare_recipe`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from klc.content import sha256
from klc.errors import KlcError

if TYPE_CHECKING:
    from klc.gate import GateRecord
    from klc.optimize.judge import NoiseJudge
    from klc.optimize.result import TrialLog
    from klc.optimize.targets import Candidate, Version
    from klc.recipes import Replay
    from klc.rule import Rule


@dataclass
class RecipeTrial:
    """A lineage recipe's kernel that the gate found faster, before the round compares it."""

    label: str
    source: bytes
    record: GateRecord
    log: TrialLog


class RecipeReplay:
    """The recipes of one run (``klc.recipes.Recipe``) and the (family, version) pairs
    already replayed."""

    def __init__(self, path: str, rules: list[Rule], recipes: Iterable[Any] = ()) -> None:
        self.path = path
        self.rules = {r.name: r for r in rules}
        self.recipes = list(recipes)
        self.tried: set[tuple[str, str]] = set()

    def choices(self, cur: Version, visited: set[str], notes: list[str]) -> list[Replay]:
        """The replays, from ``cur``, of the recipes not yet tried on it whose kernels were
        not visited, to gate in this order: the one that takes the most of its expert's
        structural steps (ties: the larger gain), then, when another, the one whose walk
        measured the largest gain. A recipe's gain was measured on its own kernel: a short
        generic recipe (a block per row, 42x on its softmax) can outrank the recipe made for
        this kind of kernel (a warp's key tile, two structural steps of its expert, 7.7x),
        so both are tried and the gate decides. A replay that stops says why in
        ``notes``."""
        from klc.recipes import replay

        found: dict[str, Replay] = {}
        for recipe in self.recipes:
            key = (recipe.family, cur.sha)
            if key in self.tried:
                continue
            self.tried.add(key)
            try:
                rp = replay(recipe, cur.source, self.path, self.rules)
            except KlcError as e:
                notes.append(f"lineage {recipe.family}: the replay stopped: {e}")
                continue
            if rp is None:
                continue
            digest = sha256(rp.source)
            if digest in visited:
                continue
            if digest not in found or rp.gain > found[digest].gain:
                found[digest] = rp  # (two recipes that reach one kernel: one trial)
        if not found:
            return []
        replays = list(found.values())
        deepest = max(replays, key=lambda rp: (self.depth(rp), rp.gain))
        fastest = max(replays, key=lambda rp: rp.gain)
        return [deepest] if fastest is deepest else [deepest, fastest]

    def depth(self, rp: Replay) -> int:
        """How many structural skills (``klc.rule.reach``) the replay applied: how much of
        its expert's path this kernel took."""
        from klc.rule.reach import structural

        rules = self.rules
        return sum(1 for step in rp.recipe.steps[rp.start:rp.end + 1]
                   if step.skill in rules and structural(rules[step.skill]))

    def again(self, rp: Replay, cur: Version, holes_at: dict[int, dict[str, str]]
              ) -> Replay | None:
        """``rp``'s recipe replayed once more from ``cur`` with other hole values at some of
        its steps (``klc.recipes.replay``'s ``holes_at``); None when it stops or reaches
        nothing the walk measured faster."""
        from klc.recipes import replay

        try:
            return replay(rp.recipe, cur.source, self.path, self.rules, holes_at=holes_at)
        except KlcError:
            return None

    @staticmethod
    def rival(cur: Version, rt: RecipeTrial, ran: list[Candidate], visited: set[str],
              judge: NoiseJudge) -> Candidate | None:
        """The fastest of the round's own moves from ``cur`` that is clearly faster than
        the recipe's kernel (beyond the noise), or None: a recipe is ranked by its
        lineage's gain, measured on another kernel."""
        rivals = [c for c in ran if c.log.outcome == "improved"
                  and sha256(c.source) not in visited
                  and (c.log.speedup or 0.0) > (rt.log.speedup or 0.0)
                  * (1 + judge.threshold(c.log.noise, cur.noise))]
        return max(rivals, key=lambda c: c.log.speedup or 0.0) if rivals else None
