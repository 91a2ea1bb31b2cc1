"""The coarsening climb: a hole that divides the grid (``rewrite launch grid.x /= ?factor``:
how many elements a grid-stride loop gives each thread, ``klc.fill.shape.coarsening_holes``)
is tried above the value that paid, one step of its domain at a time, while the kernel has
headroom.

Why: such a factor is correct at any value, and the value that pays is the kernel's and
the device's, not the lineage's: a walk records its expert's factor (16 for absmax_grid at
n = 2^26 with 256-thread blocks), which a recipe replays as it is, and the search's phase B
ranks the values by closeness to it (8, 32, 4). A kernel still well below the target % of
SOL after a coarsening that paid is short of work per block (its per-block tree, atomic or
private-histogram flush still counts), so the next larger factor is the trial the headroom
calls for. Each step is one gate trial, kept only when it beats the last one beyond the
noise; the climb stops at the first step that does not, at the top of the domain, at the
target % of SOL, after ``EXPLORE`` steps or when the budget is spent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from klc.content import sha256
from klc.errors import KlcError
from klc.fill.shape import coarsening_holes, larger_value
from klc.optimize.options import EXPLORE
from klc.optimize.replay import RecipeTrial

if TYPE_CHECKING:
    from klc.gate import GateRecord
    from klc.optimize.judge import NoiseJudge
    from klc.optimize.replay import RecipeReplay
    from klc.optimize.result import TrialLog
    from klc.optimize.targets import Candidate, Target, Version
    from klc.recipes import Replay
    from klc.rule import Rule


class _Loop(Protocol):
    """What the climb uses of the optimize loop (``klc.optimize.loop._Loop``, which calls
    it): its budget, target, judge, recipes and trials."""

    path: str
    target_sol: float
    judge: NoiseJudge
    replay: RecipeReplay
    visited: set[str]

    def left(self) -> int: ...

    def try_values(self, cur: Version, target: Target, values: dict[str, str]
                   ) -> Candidate | None: ...

    def trial(self, cur: Version, source: bytes, skill: str, where: str, function: str,
              values: dict[str, str], asked: dict[str, str]
              ) -> tuple[GateRecord, TrialLog] | KlcError: ...


def larger_values(rule: Rule, values: dict[str, str]) -> dict[str, str] | None:
    """``values`` with every coarsening hole of ``rule`` at the next value of its domain;
    None when the rule has none, or each is at the top of its domain."""
    out = dict(values)
    for name in coarsening_holes(rule):
        v = values.get(name)
        nxt = larger_value(rule, name, v) if v is not None else None
        if nxt is not None:
            out[name] = nxt
    return out if out != values else None


def has_headroom(log: TrialLog, target_sol: float) -> bool:
    """The trial was timed and is below the target % of SOL (a trial without a time gives
    nothing to climb from)."""
    return bool(log.speedup) and log.pct_of_sol is not None \
        and log.pct_of_sol < 100 * target_sol


def beats(judge: NoiseJudge, new: TrialLog, old: TrialLog) -> bool:
    """``new`` verified and is faster than ``old`` beyond the noise of both."""
    if new.verdict != "passed" or not new.speedup or not old.speedup:
        return False
    return new.speedup > old.speedup * (1 + judge.threshold(new.noise, old.noise))


def climb_site(loop: _Loop, cur: Version, best: Candidate) -> list[Candidate]:
    """Phase B for a skill with a coarsening hole whose trial improved on ``cur``: its
    coarsening holes one step larger at a time, the other holes as they were (module doc).
    The candidates that ran, in order (the loop keeps the round's fastest)."""
    ran: list[Candidate] = []
    top = best
    for _ in range(EXPLORE):
        if loop.left() <= 0 or not has_headroom(top.log, loop.target_sol):
            break
        values = larger_values(top.target.rule, top.values)
        if values is None:
            break
        c = loop.try_values(cur, top.target, values)
        if c is None:
            break
        ran.append(c)
        if not beats(loop.judge, c.log, top.log):
            break
        top = c
    return ran


def _coarsening_step(rp: Replay, loop: _Loop) -> tuple[int, str, str] | None:
    """(step index, hole, the walk's value) of the last skill between the replay's first
    and checkpoint steps that has a coarsening hole with a recorded value."""
    found = None
    for i in range(rp.start, rp.end + 1):
        step = rp.recipe.steps[i]
        rule = loop.replay.rules.get(step.skill)
        if rule is None:
            continue
        for name in coarsening_holes(rule):
            if name in step.holes:
                found = (i, name, step.holes[name])
    return found


def climb_recipe(loop: _Loop, cur: Version, rp: Replay, rt: RecipeTrial) -> RecipeTrial:
    """The recipe's kernel with its coarsening factor one step larger at a time while each
    beats the last (module doc); the fastest one, ``rt`` when none beat it."""
    at = _coarsening_step(rp, loop)
    if at is None:
        return rt
    index, name, value = at
    rule = loop.replay.rules[rp.recipe.steps[index].skill]
    top = rt
    for _ in range(EXPLORE):
        if loop.left() <= 0 or not has_headroom(top.log, loop.target_sol):
            break
        nxt = larger_value(rule, name, value)
        if nxt is None:
            break
        again = loop.replay.again(rp, cur, {index: {name: nxt}})
        if again is None or sha256(again.source) in loop.visited:
            break
        label = f"{again.label} with ?{name}={nxt}"
        got = loop.trial(cur, again.source, label, loop.path, "", {name: nxt}, {name: nxt})
        loop.visited.add(sha256(again.source))
        if isinstance(got, KlcError):
            break
        record, log = got
        if log.outcome != "improved" or not beats(loop.judge, log, top.log):
            break
        top = RecipeTrial(label, again.source, record, log)
        value = nxt
    return top
