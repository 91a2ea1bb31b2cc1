"""The search filler: the embedded default, no network, no model.

It proposes values for the holes of one skill at one site by searching their finite domains
(``HoleDecl.domain()``), spending the caller's budget of gate trials where they are most
likely to pay, and never spending one on a candidate that the trial's static checks
(:func:`klc.fill.trial.static_check`) can refuse. It rewrites and compiles nothing itself.
A skill measured slower is not proposed for unless the caller asks (``include_slower``).

Ranking: for each hole, the site's own guess first (a hole that reshapes the block: the
value that gives this site the block the skill was learned with, ``klc.fill.shape``), then its
default, then the values the skill card mentions (its measured effects and provenance:
``?factor = 8``, ``factor 8``, then other integers of the domain written there, unless written
as another hole's value), then the rest of the domain by closeness to those (in log2 for
positive integers, by position for enums). An assignment of several holes ranks by the sum of
its holes' ranks.

Strategy: when the untried assignments fit in the remaining budget, they are all proposed in
rank order (exhaustive). Otherwise the ranked head (the default and the card's values) goes
first, then Optuna's TPE sampler over the categorical domains, told every earlier trial at
this site (``FillRequest.history``: measured times to minimise; failed trials and static
refusals as failed trials) so that it samples near what was fast. Without Optuna, a seeded
random sample of the untried assignments. Open holes (``expr``, ``stmts``, ``ident``) take
their default when they have one; without a default search cannot fill them, and says so
(``last_reason``). An ident hole whose value the rewrite declares as a new variable
(``klc.rule.fresh``) takes the first fresh variant of its default at the site instead
(``offset``, else ``offset_1``, ``offset_2``, ...; :func:`with_fresh_defaults`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import math
import random
import warnings
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from klc.errors import KlcError
from klc.fill import FillRequest
from klc.fill.card import card_values
from klc.fill.shape import fresh_value, launch_anchors
from klc.fill.trial import (
    StaticCheck,
    is_slower,
    resolve_arch,
    site_key,
    slower_note,
    static_check,
)
from klc.rule.fresh import declared_idents, required_fresh

if TYPE_CHECKING:
    from klc.pipeline import Site
    from klc.rule import HoleDecl, Rule

WARMUP = 4  # ranked assignments proposed before the sampler takes over (large domains)
MAX_ASKS = 64  # sampler draws per proposal before giving up on finding an untried one




# --------------------------------------------------------------------------------------
# Fresh names for declared ident holes


def with_fresh_defaults(rule: Rule, site: Site) -> Rule:
    """The rule with the default of each ident hole its rewrite declares replaced by a fresh
    variant at this site (``offset`` -> ``offset_1`` where the kernel has an ``offset``), so
    that the search proposes a value the site's guards accept; the rule itself when nothing
    changes."""
    holes = dict(rule.holes)
    strict = required_fresh(rule.guard)
    for name in declared_idents(rule):
        decl = holes[name]
        if decl.default is None:
            continue
        value = fresh_value(site, str(decl.default), name in strict)
        if value != str(decl.default):
            holes[name] = dataclasses.replace(decl, default=value)
    if holes == rule.holes:
        return rule
    return dataclasses.replace(rule, holes=holes)


# --------------------------------------------------------------------------------------
# Domains and ranking


def ranked_values(rule: Rule, name: str, decl: HoleDecl, first: str | None = None
                  ) -> list[str]:
    """The hole's domain (or its default alone, for an open hole), best guess first:
    ``first`` (the site's own best guess: :func:`klc.fill.shape.launch_anchors`), the
    default, the card's values, then the rest by closeness to those."""
    domain = decl.domain()
    if domain is None:
        return [str(decl.default)] if decl.default is not None else []
    values = [str(v) for v in searched_values(decl, domain)]
    anchors: list[str] = [first] if first is not None and decl.contains(first) else []
    if decl.default is not None and decl.contains(decl.default) and \
            str(decl.default) not in anchors:
        anchors.append(str(decl.default))
    for v in card_values(rule, name, decl):
        if v not in anchors:
            anchors.append(v)
    if not anchors:
        anchors = [values[0]]
    values += [a for a in anchors if a not in values]  # (a large range: listed in part)
    pos = {v: i for i, v in enumerate(values)}

    def distance(v: str) -> float:
        if decl.type == "int" and all(int(a) > 0 for a in anchors) and int(v) > 0:
            return min(abs(math.log2(int(v)) - math.log2(int(a))) for a in anchors)
        return float(min(abs(pos[v] - pos[a]) for a in anchors))

    rest = sorted((v for v in values if v not in anchors), key=lambda v: (distance(v), pos[v]))
    return anchors + rest


MAX_SEARCHED = 4096  # values of one hole's domain that search ranks; a larger range, in part


def searched_values(decl: HoleDecl, domain: Sequence[int | str]) -> Sequence[int | str]:
    """The values of a domain that search ranks: all of them, or for a range of more than
    ``MAX_SEARCHED`` values its ends, its powers of two and their neighbours (what a tile, a
    factor or a block size is), never the range listed whole."""
    if not isinstance(domain, range) or (decl.size() or 0) <= MAX_SEARCHED:
        return domain
    lo, hi = domain.start, domain.stop - 1
    picks = {lo, hi}
    p = 1
    while p <= hi and len(picks) < MAX_SEARCHED:
        for v in (p - 1, p, p + 1, -p):
            if lo <= v <= hi:
                picks.add(v)
        p *= 2
    return sorted(picks)[:MAX_SEARCHED]


def open_holes_without_default(rule: Rule) -> list[str]:
    return [n for n, d in rule.holes.items() if d.domain() is None and d.default is None]


def hole_relations(rule: Rule) -> list[Any]:
    """The guard's conjuncts that tie hole values alone (predicates registered with the trait
    ``Traits.hole_relation``, such as ``is_product(?t, ?r, ?factor)``, learned by
    ``klc.reverse``): judged without any code."""
    from klc.guards import with_trait
    from klc.rule import GuardAnd, GuardCall

    if rule.guard is None:
        return []
    relations = with_trait(lambda t: t.hole_relation)
    parts = list(rule.guard.operands) if isinstance(rule.guard, GuardAnd) else [rule.guard]
    return [c for c in parts if isinstance(c, GuardCall) and c.name in relations
            and all(a.kind in ("hole", "int") for a in c.args)]


def relation_refusal(rule: Rule, values: dict[str, str]) -> str:
    """Why ``values`` break one of the rule's hole relations ("" when they keep them all, or
    when a hole a relation reads has no value yet)."""
    from klc.guards import PREDICATES

    for call in hole_relations(rule):
        args: list[Any] = []
        for a in call.args:
            if a.kind == "hole":
                v = values.get(str(a.value))
                if v is None:
                    break
                try:
                    args.append(int(str(v).strip(), 0))
                except ValueError:
                    args.append(v)
            else:
                args.append(a.value)
        else:
            verdict = PREDICATES[call.name].fn(None, *args)
            if not verdict.ok:
                return f"{call.name}: {verdict.reason}"
    return ""


def space_size(rule: Rule) -> int:
    """Assignments of the rule's holes, less those that break a hole relation."""
    if hole_relations(rule):
        return len(ranked_assignments(rule))
    return math.prod(len(ranked_values(rule, n, d)) for n, d in rule.holes.items())


def ranked_assignments(rule: Rule, limit: int | None = None,
                       first: dict[str, str] | None = None) -> list[dict[str, str]]:
    """Assignments in rank order (sum of per-hole ranks, then the earlier hole's rank first).
    With ``limit``, only the best ``limit`` (from the heads of each hole's list). ``first``:
    the site's own best guess per hole (:func:`ranked_values`)."""
    names = list(rule.holes)
    first = first or {}
    lists = [ranked_values(rule, n, rule.holes[n], first.get(n)) for n in names]
    if limit is not None:
        width = max(1, limit)
        lists = [lst[:width] for lst in lists]
    combos = itertools.product(*(list(enumerate(lst)) for lst in lists))
    scored = sorted(combos, key=lambda c: (sum(i for i, _ in c), [i for i, _ in c]))
    out = [{n: v for n, (_, v) in zip(names, c, strict=True)} for c in scored]
    if hole_relations(rule):
        out = [v for v in out if not relation_refusal(rule, v)]
    return out[:limit] if limit is not None else out


def _norm(rule: Rule, values: dict[str, str]) -> tuple[tuple[str, str], ...] | None:
    try:
        return tuple(sorted((n, rule.holes[n].validate(v)) for n, v in values.items()))
    except (KeyError, KlcError):
        return None


# --------------------------------------------------------------------------------------
# The filler


class SearchFiller:
    """Enumerate, rank and sample hole values under static constraints (module doc)."""

    name = "search"

    def __init__(self, *, arch: str | None = None, seed: int = 0, use_optuna: bool = True,
                 static: bool = True, include_slower: bool = False) -> None:
        self._arch = arch
        self.include_slower = include_slower
        self.seed = seed
        self.use_optuna = use_optuna
        self.static = static
        self.last_reason = ""
        self.refusals: list[tuple[str, StaticCheck]] = []  # (site key, check), all calls
        self.strategy = ""  # "exhaustive" | "tpe" | "random" | "none": the last call's
        self.without_optuna = False  # sampled at random because optuna is not installed
        self._proposed = 0
        self._checks = 0

    @property
    def arch(self) -> str:
        if self._arch is None:
            self._arch = resolve_arch(None)
        return self._arch

    def usage(self) -> dict[str, int]:
        return {"proposed": self._proposed, "static_checks": self._checks,
                "static_refusals": len(self.refusals)}

    def propose(self, req: FillRequest, k: int) -> list[dict[str, str]]:
        self.last_reason = ""
        fresh = with_fresh_defaults(req.rule, req.site)  # declared names: fresh variants
        if fresh is not req.rule:
            req = dataclasses.replace(req, rule=fresh)
        rule = req.rule
        if is_slower(rule) and not self.include_slower:
            self.strategy = "none"
            self.last_reason = slower_note(rule)
            return []
        missing = open_holes_without_default(rule)
        if missing:
            self.strategy = "none"
            self.last_reason = (f"{rule.name}: search cannot fill the open hole(s) "
                                + ", ".join(f"?{n} ({rule.holes[n].type})" for n in missing)
                                + " without a default; use the LLM filler (--filler llm) or "
                                "--hole")
            return []
        tried = {t for t in (_norm(rule, tr.values) for tr in req.history) if t is not None}
        skey = site_key(req.site)
        refused = {_norm(rule, c.values) for s, c in self.refusals if s == skey}
        total = space_size(rule)
        untried = total - len(tried) - len(refused - tried)
        if untried <= 0 or k <= 0:
            self.strategy = "none"
            self.last_reason = (f"{rule.name}: all {total} assignment(s) at this site were "
                                "tried or refused" if untried <= 0 else "no budget")
            return []
        exhaustive = untried <= max(req.budget, k) or not rule.holes
        # the values this site's launch fixes, and the learned block at this site
        first = {**getattr(req.site, "holes", {}), **launch_anchors(rule, req.site, req.spec)}
        out: list[dict[str, str]] = []
        if exhaustive:
            self.strategy = "exhaustive"
            pool: Iterable[dict[str, str]] = ranked_assignments(rule, first=first)
            for values in pool:
                if len(out) >= k:
                    break
                self._consider(req, values, tried, refused, out)
        else:
            self.strategy = "tpe" if self.use_optuna and _has_optuna() else "random"
            self.without_optuna |= self.use_optuna and self.strategy == "random"
            for values in ranked_assignments(rule, limit=WARMUP, first=first):
                if len(tried) + len(out) >= WARMUP or len(out) >= k:
                    break
                self._consider(req, values, tried, refused, out)
            if len(out) < k:
                self._sample(req, k, tried, refused, out)
        if not out and not self.last_reason:
            self.last_reason = (f"{rule.name}: every untried assignment at this site was "
                                "refused by the static checks" if self.static else
                                f"{rule.name}: nothing left to propose")
        self._proposed += len(out)
        return out

    def _consider(self, req: FillRequest, values: dict[str, str], tried: set[Any],
                  refused: set[Any], out: list[dict[str, str]]) -> bool:
        key = _norm(req.rule, values)
        if key is None or key in tried or key in refused or \
                any(_norm(req.rule, o) == key for o in out):
            return False
        if relation_refusal(req.rule, dict(key)):
            refused.add(key)  # no code to look at: not a static check, not a refusal to note
            return False
        if self.static:
            self._checks += 1
            check = static_check(req.unit, req.site, values, req.spec, self.arch)
            if not check.ok:
                self.refusals.append((site_key(req.site), check))
                refused.add(key)
                return False
        out.append(dict(key))
        return True

    def _sample(self, req: FillRequest, k: int, tried: set[Any], refused: set[Any],
                out: list[dict[str, str]]) -> None:
        if self.strategy == "tpe":
            self._tpe(req, k, tried, refused, out)
        else:
            self._random(req, k, tried, refused, out)

    def _seed(self, req: FillRequest, salt: int) -> int:
        h = hashlib.sha256(f"{self.seed}:{site_key(req.site)}:{salt}".encode()).digest()
        return int.from_bytes(h[:4], "little")

    def _random(self, req: FillRequest, k: int, tried: set[Any], refused: set[Any],
                out: list[dict[str, str]]) -> None:
        rng = random.Random(self._seed(req, len(req.history)))
        names = list(req.rule.holes)
        lists = [ranked_values(req.rule, n, req.rule.holes[n]) for n in names]
        for _ in range(MAX_ASKS * max(1, k)):
            if len(out) >= k:
                return
            values = {n: rng.choice(lst) for n, lst in zip(names, lists, strict=True)}
            self._consider(req, values, tried, refused, out)

    def _tpe(self, req: FillRequest, k: int, tried: set[Any], refused: set[Any],
             out: list[dict[str, str]]) -> None:
        import optuna
        from optuna.distributions import CategoricalDistribution
        from optuna.trial import TrialState, create_trial

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        rule = req.rule
        dists = {n: CategoricalDistribution(ranked_values(rule, n, d))
                 for n, d in rule.holes.items()}
        with warnings.catch_warnings():  # multivariate TPE is marked experimental
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            sampler = optuna.samplers.TPESampler(seed=self._seed(req, len(req.history)),
                                                 n_startup_trials=WARMUP, multivariate=True)
        study = optuna.create_study(direction="minimize", sampler=sampler)
        for t in req.history:
            key = _norm(rule, t.values)
            if key is None:
                continue
            params = dict(key)
            if t.ok and t.median_ms is not None:
                study.add_trial(create_trial(params=params, distributions=dists,
                                             value=t.median_ms))
            else:
                study.add_trial(create_trial(params=params, distributions=dists,
                                             state=TrialState.FAIL))
        for key in refused:
            if key is not None:
                study.add_trial(create_trial(params=dict(key), distributions=dists,
                                             state=TrialState.FAIL))
        for _ in range(MAX_ASKS * max(1, k)):
            if len(out) >= k:
                return
            trial = study.ask(dists)
            values = {n: str(trial.params[n]) for n in dists}
            before = len(out)
            self._consider(req, values, tried, refused, out)
            # what was proposed is pending (the gate decides); what was refused, or already
            # tried, is a failure as far as the sampler is concerned, so it moves on
            study.tell(trial, state=TrialState.PRUNED if len(out) > before else TrialState.FAIL)


def _has_optuna() -> bool:
    try:
        import optuna  # noqa: F401
    except ImportError:
        return False
    return True
