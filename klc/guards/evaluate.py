"""Evaluation of a guard expression (``klc.rule.guard``) at a match.

Three-valued verdicts: a predicate may not know. ``Verdict.unknown`` marks that; an unknown
verdict is *pending* (``ok=True``) when it only waits for a hole value (``depends on ?h``:
listing works before a value is chosen, and the guard is checked again once it is filled), or
*failed closed* (``ok=False``) when a fact is missing. ``not`` leaves unknown verdicts as they
are, so ``not p`` never turns "cannot tell" into "yes".
"""

from __future__ import annotations

from time import perf_counter
from typing import Any

from klc.guards.registry import GuardContext, Predicate, Verdict
from klc.guards.table import PREDICATES
from klc.rule.guard import GuardAnd, GuardCall, GuardExpr, GuardNot, GuardOr


def evaluate(expr: GuardExpr, ctx: GuardContext) -> Verdict:
    """Decide a guard expression: ``and`` fails with the first failing reason, ``or`` fails
    with all of them, ``not`` flips a known verdict and keeps its reason."""
    if isinstance(expr, GuardCall):
        return _call(expr, ctx)
    if isinstance(expr, GuardNot):
        v = evaluate(expr.operand, ctx)
        if v.unknown:
            return v
        if v.ok:  # (the reason written only when it is read)
            return Verdict(False, lambda: f"not ({v.reason})", v.start)
        return Verdict(True, v._reason, v.start)
    # Short-circuit on a decisive known verdict (a known "no" for `and`, a known "yes" for
    # `or`): later operands may be costly (libclang) and cannot change the outcome.
    decisive = isinstance(expr, GuardOr)
    verdicts: list[Verdict] = []
    for e in expr.operands:
        v = evaluate(e, ctx)
        if v.ok == decisive and not v.unknown:
            return v
        verdicts.append(v)
    if isinstance(expr, GuardAnd):
        return _and_of(verdicts)
    for want in ((True, False), (True, True)):
        for v in verdicts:
            if (v.ok, v.unknown) == want:
                return v
    unknown = any(v.unknown for v in verdicts)
    return Verdict(False, lambda: "; and ".join(v.reason for v in verdicts), verdicts[0].start,
                   unknown)


def _and_of(verdicts: list[Verdict]) -> Verdict:
    """An ``and``'s verdict from its operands' (in written order): its first known "no",
    else its first "cannot tell", else a "yes", pending where one waits for a hole."""
    for want in ((False, False), (False, True)):  # a known "no" first, then "cannot tell"
        for v in verdicts:
            if (v.ok, v.unknown) == want:
                return v
    pending = [v for v in verdicts if v.unknown]
    if pending:
        return Verdict(True, lambda: "; ".join(v.reason for v in pending), pending[0].start,
                       True)
    return Verdict(True, lambda: "; ".join(v.reason for v in verdicts), verdicts[0].start)


def lets_through(expr: GuardExpr, ctx: GuardContext) -> Verdict:
    """``evaluate``'s verdict where only whether the guard lets the match through is read (a
    listing of the applicable sites: a refused one is not shown): a top-level ``and`` stops
    at the first operand that refuses, a known "no" or a missing fact (it refuses either
    way, for another reason perhaps), and asks its operands in the order that has refused
    soonest for the least time so far in this process (``_Plan``: a query planner's
    filter order, by each operand's mean time over its share of refusals). One that lets the
    match through asked every operand, and its verdict is ``evaluate``'s."""
    if not isinstance(expr, GuardAnd):
        return evaluate(expr, ctx)
    held = _PLANS.get(id(expr))
    if held is None or held[0] is not expr:
        held = _PLANS[id(expr)] = (expr, _Plan(len(expr.operands)))
    plan = held[1]
    operands = expr.operands
    verdicts: list[Verdict | None] = [None] * len(operands)
    for i in plan.order:
        t = perf_counter()
        v = evaluate(operands[i], ctx)
        plan.saw(i, perf_counter() - t, not v.ok)
        if not v.ok:
            return v
        verdicts[i] = v
    return _and_of(verdicts)  # type: ignore[arg-type]


class _Plan:
    """The order an ``and``'s operands are asked in by ``lets_through``: written order at
    first, then by each one's mean time divided by its share of refusals (smoothed: one
    never asked costs nothing yet, so each is tried), made again each time an operand's
    questions or its time double. (By time too: an operand that costs 10 ms a question on
    a large file is put behind the cheap ones after one question, not after the next
    doubling of its count, which could be hundreds of questions away: the order a worker
    learns on the largest files, which it takes first, cost it a quarter more time.)
    Only time depends on it: the verdict is the same in any order."""

    __slots__ = ("calls", "next_calls", "next_time", "order", "refusals", "time")

    def __init__(self, n: int) -> None:
        self.order: tuple[int, ...] = tuple(range(n))
        self.time = [0.0] * n
        self.calls = [0] * n
        self.refusals = [0] * n
        # the questions and the seconds of each operand at which the order is made again
        self.next_calls = [4] * n
        self.next_time = [_FIRST_TIME] * n

    def saw(self, i: int, seconds: float, refused: bool) -> None:
        self.time[i] += seconds
        self.calls[i] += 1
        self.refusals[i] += refused
        if self.calls[i] >= self.next_calls[i] or self.time[i] >= self.next_time[i]:
            while self.next_calls[i] <= self.calls[i]:
                self.next_calls[i] *= 2
            while self.next_time[i] <= self.time[i]:
                self.next_time[i] *= 2
            self.order = tuple(sorted(self.order, key=self._rank))

    def _rank(self, i: int) -> float:
        n = self.calls[i]
        return (self.time[i] / n if n else 0.0) * (n + 2) / (self.refusals[i] + 1)


_PLANS: dict[int, tuple[GuardAnd, _Plan]] = {}  # by the ``and``'s id, kept beside it
_FIRST_TIME = 0.002  # seconds: an operand's time at which the order is first made again


def _call(call: GuardCall, ctx: GuardContext) -> Verdict:
    pred = PREDICATES.get(call.name)
    if pred is None:  # the loader refuses these; a hand-built expression may not
        return Verdict(False, f"unknown guard predicate {call.name!r}", None, True)
    args: list[Any] = []
    key: list[Any] = [call.name]  # for the memo: a metavariable by its name (one match)
    for arg in call.args:
        if arg.kind == "hole":
            value = ctx.holes.get(str(arg.value))
            if value is None:
                return Verdict(True, f"{call.name}: depends on ?{arg.value}", None, True)
            args.append(_int_or_text(value))
            key += ("hole", args[-1])
        elif arg.kind in ("metavar", "sequence"):
            b = ctx.match.bindings.get(str(arg.value))
            if b is None:
                return Verdict(False, f"{call.name}: {arg} is not bound by the match", None,
                               True)
            args.append(b)
            key += (arg.kind, arg.value)
        else:
            args.append(arg.value)
            key += (arg.kind, arg.value)
    memo = ctx.memo
    if memo is None or pred.traits.reads_rule:
        return _run(pred, ctx, call, args)
    at = tuple(key)
    verdict = memo.get(at)
    if verdict is None:
        verdict = memo[at] = _run(pred, ctx, call, args)
    return verdict


def _run(pred: Predicate, ctx: GuardContext, call: GuardCall, args: list[Any]) -> Verdict:
    try:
        return pred.fn(ctx, *args)
    except Exception as e:  # a guard must never take a batch down: fail closed, say why
        return Verdict(False, f"unknown: {call.name} could not judge this code ({e!r})",
                       ctx.match.start, True)


def _int_or_text(value: str) -> int | str:
    try:
        return int(value.strip(), 0)
    except ValueError:
        return value.strip()
