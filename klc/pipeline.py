"""The pipeline: rules x unit -> sites (match, context, guards) -> rewrites -> checked source.

``find_sites`` is what ``klc list`` shows; ``apply_rules`` is what ``klc apply`` runs. Both
return plain data and never print. The stages, in order:

1. match   - each rule's compiled anchor against the unit (candidates by node type);
2. context - the rule's context clause (inside a kernel, a loop, at kernel scope), and the
             execution space: a rewrite that writes device-only code (``__expf``,
             ``__shfl_xor_sync``, ``threadIdx``) never lands in host code;
3. region  - a match overlapping a syntax-error region is never rewritten;
4. guards  - the static predicates, each false one with its reason ("why not"), then
             ``fresh_name(?h)`` for each ident hole the rewrite declares (``klc.rule.fresh``);
5. rewrite - byte-span edits of every applicable site, overlapping ones dropped;
6. reparse - the result must parse with no new syntax problem, else it is refused.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from tree_sitter import Node

from klc.analysis.tree import unit_memo
from klc.analysis.types import has_type_kind
from klc.cuda.model import Problem, Unit
from klc.cuda.parse import parse_bytes
from klc.cuda.syntax import LOOP_TYPES
from klc.edits import ByteEdit, Rewrite, apply_edits, facts, host_launch, plan
from klc.edits.bytes import Moves, hidden_text
from klc.edits.render import render
from klc.edits.within import sub_matches, why_none
from klc.errors import KlcError
from klc.guards import GuardContext, Verdict, evaluate, lets_through
from klc.guards.geometry import site_holes
from klc.guards.loops import evaluate_declared, fresh_defaults
from klc.match import Match, Pattern, find_matches, index_nodes
from klc.match import pattern_of as _pattern_of
from klc.match.dots import rule_scope_refusal
from klc.match.find import anchor_words, common_bindings, first_per_name, first_per_span, possible
from klc.match.scope import Scope, scoped, where_of
from klc.rule.fresh import implied_fresh
from klc.rule.values import check_hole_names, resolve_holes
from klc.site_keys import (
    Locals,
    anchor_key,
    first_uses,
    guard_key,
    parameter_names,
    pointer_parameter_names,
    reads_holes,
    rule_facts,
    rule_plans,
)
from klc.spec import Bound

if TYPE_CHECKING:
    from klc.rule import Rule
    from klc.spec import Spec


@dataclass
class Site:
    """A match of a rule, and whether its context and guards hold there."""

    rule: Rule
    match: Match
    ok: bool
    reason: str  # why not, when not ok; "" when ok
    stage: str  # the stage that refused it: "context" | "region" | "guard" | ""
    # the hole values the site's own launch and constants fix where none was given
    # (``klc.fill.shape.site_holes``): the guards were judged, and a rewrite fills, with them
    holes: dict[str, str] = field(default_factory=dict)

    @property
    def function_name(self) -> str:
        return self.match.function.name if self.match.function else ""


@dataclass
class Outcome:
    """What applying rules to one unit did: the new source, the sites used and refused."""

    unit: Unit
    source: bytes  # the new source (the original when nothing applied)
    applied: list[Rewrite] = field(default_factory=list)
    refused: list[Site] = field(default_factory=list)
    skipped: list[tuple[Site, str]] = field(default_factory=list)  # applicable, not applied
    notes: list[str] = field(default_factory=list)
    # a rewrite applied in a later round (``compose``): id -> its site as matched in
    # ``unit``, and why it waited
    origin: dict[int, tuple[Site, str]] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return self.source != self.unit.source

    def start_of(self, rw: Rewrite) -> int:
        """Where an applied rewrite's site is in the original unit (a rewrite of a later
        round was matched in the code an earlier one left)."""
        site = self.origin.get(id(rw))
        return site[0].match.start if site is not None else rw.match.start

    def note_rounds(self) -> Outcome:
        """A note for each site applied in a later round: why it waited."""
        for site, why in (self.origin[id(rw)] for rw in self.applied if id(rw) in self.origin):
            self.notes.append(f"{self.unit.where(site.match.start)}: {site.rule.name}: {why}: "
                              "judged again on the rewritten code and applied")
        return self


def spec_of(unit: Unit) -> object | None:
    """The unit's kernel spec (a ``/* klc-spec`` block), or None when it has none."""
    from klc.spec import load_spec

    return load_spec(unit.source, unit.path)


def pattern_of(rule: Rule) -> Pattern:
    """The rule's anchor with its metavariables' kinds and its isomorphisms, compiled once
    per process (``klc.match.pattern_of``)."""
    return _pattern_of(rule)


def _in_loop(match: Match) -> bool:
    node: Node | None = match.nodes[0].parent
    while node is not None:
        if node.type in LOOP_TYPES:
            return True
        if node.type == "function_definition":
            return False
        node = node.parent
    return False


def error_region(match: Match) -> Problem | None:
    """The syntax problem a match lies in: one inside the matched nodes, or inside the
    statement that holds them (an error next to a call makes the whole statement suspect)."""
    unit = match.unit
    node: Node | None = match.nodes[0]
    while node is not None and not (node.type.endswith("statement") or node.type in (
            "declaration", "field_declaration", "function_definition", "translation_unit")):
        node = node.parent
    start, end = match.start, match.end
    if node is not None and node.type != "translation_unit" and node.has_error:
        start, end = min(start, node.start_byte), max(end, node.end_byte)
    elif not any(n.has_error for n in match.nodes):
        return unit.in_error(start, end)
    return unit.in_error(start, end) or next(iter(unit.problems), None)


# names a rewrite may write that host code has too; any other `__name` is a CUDA intrinsic
_HOST_TOO = frozenset({"__restrict__", "__restrict", "__forceinline__", "__inline__",
                       "__noinline__", "__host__", "__device__", "__align__",
                       "__launch_bounds__", "__global__", "__shared__", "__constant__"})
_DEVICE_ONLY = re.compile(r"__\w+|threadIdx|blockIdx|blockDim|gridDim|warpSize|atomic\w+")
_PLACEHOLDER = re.compile(r"\$+\w+|\?\w+")
_WORD = re.compile(r"[A-Za-z_]\w*")


@lru_cache(maxsize=512)
def device_only_names(rule: Rule) -> tuple[str, ...]:
    """The device-only names (CUDA intrinsics, built-in variables, atomics) that the rule's
    rewrite writes and its anchor does not have: such a rule rewrites device code only,
    whatever its context clause says (``expf`` -> ``__expf`` in a CPU reference function
    would not compile). Sub-rules of ``rewrite within`` count too."""
    had: set[str] = set()
    wrote: list[str] = []

    def words(text: str | None) -> list[str]:
        return _WORD.findall(_PLACEHOLDER.sub(" ", text or ""))

    def visit(r: Rule) -> None:
        # ``anchor any``: a name counts as had only when every branch has it (a match of
        # another branch does not)
        branches = [set(words(a)) for a in (r.anchors or (r.anchor,))]
        had.update(set.intersection(*branches))
        for e in r.edits:
            for text in e.templates():
                wrote.extend(words(text))
            for sub in e.subrules():
                visit(sub)

    visit(rule)
    out = dict.fromkeys(w for w in wrote if w not in had and w not in _HOST_TOO
                        and _DEVICE_ONLY.fullmatch(w))
    return tuple(out)


def check_context(match: Match, context: tuple[str, ...],
                  device_names: tuple[str, ...] = ()) -> str:
    """'' when the match is where the rule's context clause allows, else why not.
    ``device_names`` (``device_only_names``): the rewrite writes device-only code, so the
    match must be in a ``__global__`` or ``__device__`` function; a ``__host__ __device__``
    one is refused too, since its host compile would see the intrinsic."""
    fn = match.function
    if device_names:
        names = ", ".join(f"`{n}`" for n in device_names)
        if fn is None or fn.kind == "host":
            where = f"`{fn.name}` is a host function" if fn is not None else \
                "not inside a __global__ or __device__ function"
            return f"context: host code ({where}); the rewrite writes {names}, device-only"
        if fn.kind == "host device":
            return (f"context: `{fn.name}` is __host__ __device__, and its host compile "
                    f"cannot call {names}")
    for c in context:
        if c == "any":
            continue
        if c == "global" and (fn is None or not fn.is_kernel):
            return "context: not inside a __global__ function"
        if c == "device" and (fn is None or not fn.is_device):
            return "context: not inside a __device__ function"
        if c == "loop" and not _in_loop(match):
            return "context: not inside a loop"
        if c == "kernel_scope":
            parent = match.nodes[0].parent
            if fn is None or not fn.is_kernel or parent is None \
                    or parent.start_byte != fn.body_start:
                return "context: not a top-level statement of a kernel body"
    return ""


def find_sites(unit: Unit, rules: list[Rule], holes: dict[str, str] | None = None,
               spec: Spec | Bound | None = None, clang: bool = True, *,
               refused: bool = True) -> list[Site]:
    """Every match of every rule in the unit, with its verdict, in source order. With
    ``clang=False`` the guards use tree-sitter facts only (no libclang parse): faster, and
    a guard that needs clang fails closed, saying so. ``refused=False``: the applicable sites
    only (what ``klc list`` shows without ``--all``), the same ones: a rule is matched only
    where its context can hold (``_scope``), and each match meets the cheap stages first
    (context, region), so that its types (libclang, where the tree cannot tell) and guards
    are judged only where it can still apply.

    Each rule's matches go through the stages in order: 1. match (``_SiteCaches.matches``),
    2. context, 3. region, 4. guards (``_RuleSites.site``). Work is shared where the answer
    cannot differ (``_SiteCaches``): rules with the same anchor share one matching pass; a
    guard made only of predicates whose verdict is shared per declaration
    (``klc.guards.Traits.per_declaration``) is judged once per function and declarations its
    metavariables name (``klc.site_keys.guard_key``), not once per use."""
    plans = rule_plans(rules, refused, _scope)
    # (a parameter's first uses are found around its name: their kinds need no index)
    caches = _SiteCaches(unit, rules, [p.pattern for p in plans if p.target is None])
    sites: list[Site] = []
    for rule, pattern, scope, target, pointers, anchor in plans:
        if target is not None:  # only the first use of each parameter can apply
            anchor, found = caches.parameter_uses(pattern, scope, target, anchor, pointers)
        else:
            found = caches.matches(pattern, scope, anchor)  # 1. match
        if found:
            judge = _RuleSites(caches, rule, anchor, found, holes or {}, spec, clang,
                               refused, pattern.common if pattern.alternatives else None)
            sites += filter(None, map(judge.site, judge.order))
    for memo in caches.memos.values():  # (a verdict that writes its reason later holds its
        memo.clear()  # context, which holds the memo: the unit freed with its last site)
    # in source order, then by rule name (two stable sorts on C-level keys)
    sites.sort(key=_by_rule_name)
    sites.sort(key=_by_start)
    return sites


_by_rule_name = operator.attrgetter("rule.name")
_by_start = operator.attrgetter("match.start")


_UNSET = object()  # a key not computed yet


class _SiteCaches:
    """What ``find_sites`` shares between the rules of one unit, in one place: the matches of
    each anchor, the keys that say which matches are one site or share a guard's verdict, and
    the verdicts themselves. What a verdict may be shared by is what its predicates declared
    when they registered (``klc.guards.Traits``)."""

    def __init__(self, unit: Unit, rules: list[Rule],
                 patterns: list[Pattern] | None = None) -> None:
        self.unit = unit
        self.patterns = [pattern_of(r) for r in rules] if patterns is None else patterns
        # which anchors may match here (``possible``: every word of one is in the file),
        # and the kinds any anchor starts at, from the index's one query run
        words = anchor_words(self.patterns)
        words.fill(unit)
        self.candidates = index_nodes(unit, words.kinds)
        self.locals = Locals(unit)
        self.scoped: dict[tuple[object, ...], Any] = {}  # (klc.match.scope.scoped)
        self.by_anchor: dict[str, list[Match]] = {}
        # per (anchor, targets): the matches that are sites of their own, the first use of
        # each declaration (``klc.site_keys.first_uses``); per (anchor, guard metavariables):
        # one key per match, the declarations it names (``klc.site_keys.guard_key``)
        self.firsts: dict[tuple[str, tuple[str, ...]], list[int]] = {}
        # the declaration each match names, by target and match (``first_uses``); the
        # matches themselves are kept alive by ``by_anchor``
        self.first_keys: dict[tuple[str, ...], dict[int, object]] = {}
        self.guard_keys: dict[tuple[str, tuple[str, ...]], list[object]] = {}
        # predicate verdicts at one match, by (anchor, match): shared by the rules that share
        # the anchor, except for predicates that read the rule (``GuardContext.memo``)
        self.memos: dict[tuple[str, int], dict[tuple[object, ...], Verdict]] = {}
        # guard verdicts by (guard number, ``klc.site_keys.guard_key``): equal guards, one number
        self.verdicts: dict[tuple[object, ...], Verdict] = {}
        self.guard_ids: dict[object, int] = {}

    def matches(self, pattern: Pattern, scope: Scope | None = None,
                key: str | None = None) -> list[Match]:
        """The matches of an anchor: found once for all the rules that share it (and the
        functions they may apply in: ``scope``). ``key``: ``_anchor_key``'s, if known."""
        if key is None:
            key = anchor_key(pattern, scope)
        found = self.by_anchor.get(key)
        if found is None:
            if pattern.alternatives:  # (each branch matched once, whichever rules share it,
                # if its words are in the file; a match keeps all its branch's bindings:
                # ``_RuleSites.site`` keeps those all branches make, as ``merge_branches`` does)
                unit = self.unit
                found = first_per_span([self.matches(b, scope) for b in pattern.alternatives
                                        if possible(b, unit)])
            elif not possible(pattern, self.unit):
                found = []  # (before its candidates are scoped)
            else:
                candidates = self.candidates if scope is None else \
                    scoped(self.unit, pattern, self.candidates, scope, self.scoped)
                found = list(find_matches(pattern, self.unit, None, candidates))
            self.by_anchor[key] = found
        return found

    def parameter_uses(self, pattern: Pattern, scope: Scope | None, target: str, anchor: str,
                       pointers: bool = False) -> tuple[str, list[Match]]:
        """The matches of an anchor that are the first uses of the parameters of their
        functions (``target`` names them: ``klc.site_keys.parameter_target``), under their
        own anchor key; where ``first_per_name`` cannot tell them, all the matches.
        ``pointers``: the target must be a pointer (``metavar $X: pointer``), so only the
        pointer and array parameters are looked for (a large kernel's scalar parameters
        are used everywhere, and no use of one can apply)."""
        key = f"{anchor}\0{target}\0{int(pointers)}"
        found = self.by_anchor.get(key)
        if found is None:
            found = first_per_name(pattern, self.unit, lambda b: where_of(
                self.unit, b, scope, self.candidates, self.scoped),
                target, pointer_parameter_names if pointers else parameter_names)
            if found is None:
                return anchor, self.matches(pattern, scope)
            self.by_anchor[key] = found
        return key, found

    def memo(self, anchor: str, i: int) -> dict[tuple[object, ...], Verdict]:
        return self.memos.setdefault((anchor, i), {})


@lru_cache(maxsize=1024)
def _scope(rule: Rule) -> Scope | None:
    """The functions a rule can apply in, None when anywhere (``context: any`` or ``loop``,
    and a rewrite that host code compiles too)."""
    context = set(rule.context)
    scope = Scope("global" in context or "kernel_scope" in context, "device" in context,
                   bool(device_only_names(rule)), "kernel_scope" in context)
    return scope if any(scope) else None


class _RuleSites:
    """One rule's matches through the stages after matching: context, region, guards (and a
    ``within`` edit's sub-matches), each refused match with the stage that refused it; with
    ``refused`` off, the applicable ones only, the cheap stages first."""

    def __init__(self, caches: _SiteCaches, rule: Rule, anchor: str, found: list[Match],
                 holes: dict[str, str], spec: Spec | Bound | None, clang: bool,
                 refused: bool = True, common: frozenset[str] | None = None) -> None:
        self.caches, self.rule, self.anchor, self.found = caches, rule, anchor, found
        self.common = common  # ``anchor any``: the bindings a match keeps (its branches')
        self.refused = refused
        self.holes = resolve_holes(rule, holes, strict=False)
        self.given = holes
        self.spec, self.clang = spec, clang
        facts_ = rule_facts(rule)
        self.targets = facts_.targets  # uses of one declaration: one site
        # the matches judged: with targets, the first use of each declaration (and every
        # match whose targets name no declaration), the rest being the same sites
        self.order: Sequence[int] = range(len(found))
        if self.targets:
            order = caches.firsts.get((anchor, self.targets))
            if order is None:
                order = caches.firsts[(anchor, self.targets)] = first_uses(
                    found, self.targets, caches.locals,
                    caches.first_keys.setdefault(self.targets, {}))
            self.order = order
        self.guard_vars = facts_.guard_vars  # a guard judged once per declaration
        self.guard_keys: list[object] = []
        if self.guard_vars is not None:
            self.guard_keys = caches.guard_keys.setdefault((anchor, self.guard_vars),
                                                           [_UNSET] * len(found))
            self.guard_id = caches.guard_ids.setdefault(rule.guard, len(caches.guard_ids))
        self.has_within = facts_.has_within
        self.runs = facts_.runs
        self.fresh = facts_.fresh
        self.declared = tuple(d for d in facts_.declared if d[0] not in holes)
        # whether the guard may be judged before the fresh names of ``fixed`` are found (most
        # matches are refused by it): it reads none of those holes
        self.guard_first = bool(self.declared) and rule.guard is not None \
            and not reads_holes(facts_.guard_holes, {h for h, _ in self.declared})
        self.launch_edits = facts_.launch_edits
        self._spec_kernel: object = _UNSET
        self.device_names = device_only_names(rule)
        self.typed = facts_.typed
        # a context that reads only the function: judged once per function
        self.by_function = set(rule.context) <= {"any", "global", "device"}
        self.contexts: dict[int, str] = {}
        self.no_problems = not caches.unit.problems

    def site(self, i: int) -> Site | None:
        """The site of match ``i`` (one of ``order``); None when it is no site of its own (a
        binding of another type than ``metavar $X: pointer`` says)."""
        shared, rule = self.found[i], self.rule
        bindings = shared.bindings
        if self.common is not None:
            keep = common_bindings(tuple(bindings), self.common)
            if keep is not None:
                bindings = {n: bindings[n] for n in keep}
        m = Match(rule, self.caches.unit, shared.function, shared.start, shared.end, shared.nodes,
                  bindings, obligations=shared.obligations, reads=shared.reads)
        if not self.refused:  # the applicable sites only: the cheap stages first, then the
            # guard (judged once per declaration), then the types (libclang where the tree
            # cannot tell), then the rest
            if self.context(m) or (not self.no_problems and error_region(m) is not None):
                return None
            if self.guard_first:  # (the guard reads no name ``fresh_defaults`` gives)
                geometry = site_holes(rule, m, self.spec, self.given)
                if not self.guard(m, i, geometry).ok:
                    return None
                fixed = self.fixed(m, i, geometry)
            else:
                fixed = self.fixed(m, i)
                if rule.guard is not None and not self.guard(m, i, fixed).ok:
                    return None
            if (self.typed or m.obligations) and not self.types_hold(m, i):
                return None
            return Site(rule, m, True, "", "", fixed) \
                if self.judge(m, i, False, fixed) is None else None
        if (self.typed or m.obligations) and not self.types_hold(m, i):
            return None
        why = self.context(m)  # 2. context
        if why:
            return Site(rule, m, False, why, "context")
        problem = None if self.no_problems else error_region(m)  # 3. region
        if problem is not None:
            return Site(rule, m, False, "inside a syntax-error region: "
                        + problem.describe(self.caches.unit.path), "region")
        fixed = self.fixed(m, i)
        why = self.judge(m, i, fixed=fixed)
        if why is not None:
            return Site(rule, m, False, why, "guard", fixed)
        return Site(rule, m, True, "", "", fixed)

    def fixed(self, m: Match, i: int, geometry: dict[str, str] | None = None
              ) -> dict[str, str]:
        """The hole values the site itself gives: those its launch and constants fix
        (``klc.guards.geometry.site_holes``; ``geometry``: found already), and for a name the
        rewrite declares that the user gave no value and whose default the function uses
        already, the default's first fresh variant (``klc.guards.loops.fresh_defaults``)."""
        rule = self.rule
        if geometry is not None:
            out = dict(geometry)
        else:
            out = site_holes(rule, m, self.spec, self.given) if rule.guard is not None else {}
        if self.declared:
            out.update(fresh_defaults(self.context_of(m, i, out), self.declared))
        return out

    def judge(self, m: Match, i: int, guard: bool = True,
              fixed: dict[str, str] | None = None) -> str | None:
        """4. guards: why the match is refused, None when it applies (``guard`` off: but
        the rule's guard, judged already). ``fixed``: the hole values the site's own launch
        gives (``klc.guards.geometry.site_holes``)."""
        fixed = fixed or {}
        if guard and self.rule.guard is not None:
            verdict = self.guard(m, i, fixed)
            if not verdict.ok:
                return verdict.reason
        if self.fresh:  # the names the rewrite declares: fresh_name(?h), implied
            refused = evaluate_declared(self.fresh, self.context_of(m, i, fixed))
            if refused is not None:
                return refused.reason
        if self.runs:  # a name a run declares: read in its scope, and written there
            why = rule_scope_refusal(self.rule, m)
            if why is not None:
                return why
        if self.launch_edits:  # the launch it changes must be recorded in the file
            kernel = m.function.name if m.function is not None else ""
            why = host_launch.unrecorded(self.caches.unit, kernel,
                                         kernel == self.spec_kernel(), self.launch_edits)
            if why is not None:
                return why
        if self.has_within:
            m.subs = sub_matches(m, {**self.holes, **fixed}, self.spec, self.clang)
            if not m.subs.count:
                return why_none(m, m.subs)
        return None

    def spec_kernel(self) -> str | None:
        """The kernel the spec describes: the one given, else the unit's own (as applying does)."""
        if self._spec_kernel is _UNSET:
            spec = self.spec
            self._spec_kernel = getattr(spec, "spec", spec).kernel_name \
                if spec is not None else _spec_kernel(self.caches.unit)  # (a Bound wraps one)
        return self._spec_kernel  # type: ignore[return-value]

    def context_of(self, m: Match, i: int, fixed: dict[str, str] | None = None
                   ) -> GuardContext:
        holes = {**self.holes, **fixed} if fixed else self.holes
        return GuardContext(m, holes, self.spec, self.clang,
                            self.caches.memo(self.anchor, i), render)

    def types_hold(self, m: Match, i: int) -> bool:
        """``metavar $X: pointer``: a binding of another type is no match."""
        ctx = self.context_of(m, i)
        return all(has_type_kind(ctx, m.bindings[n], k) for n, k in self.typed
                   if n in m.bindings) \
            and all(has_type_kind(ctx, o, o.name) for o in m.obligations)

    def context(self, m: Match) -> str:
        if not self.by_function:
            return check_context(m, self.rule.context, self.device_names)
        key = id(m.function)
        why = self.contexts.get(key)
        if why is None:
            why = self.contexts[key] = check_context(m, self.rule.context, self.device_names)
        return why

    def guard(self, m: Match, i: int, fixed: dict[str, str] | None = None) -> Verdict:
        """The rule's guard at match ``i``: judged once per function and declarations where
        its predicates allow (``klc.site_keys.guard_key``), else at this match (without the
        refused sites, for whether it lets the match through: ``lets_through``). ``fixed``:
        the hole values the site's geometry gives (``site_holes``), judged with the rest."""
        assert self.rule.guard is not None
        key, judge = None, evaluate if self.refused else lets_through
        if fixed:
            return judge(self.rule.guard, self.context_of(m, i, fixed))
        if self.guard_vars is not None:
            gkey = self.guard_keys[i]
            if gkey is _UNSET:
                gkey = self.guard_keys[i] = guard_key(m, self.guard_vars, self.caches.locals)
            if gkey is not None:
                key = (self.guard_id, gkey)  # type: ignore[assignment]
        verdict = (verdicts := self.caches.verdicts).get(key) if key is not None else None
        if verdict is None:
            verdict = judge(self.rule.guard, self.context_of(m, i))
            if key is not None:
                verdicts[key] = verdict
        return verdict


def apply_rules(unit: Unit, rules: list[Rule], holes: dict[str, str] | None = None,
                spec: Spec | Bound | None = None, clang: bool = True) -> Outcome:
    """Apply every applicable site of the rules once; return the checked new source.
    ``clang=False``: guards on tree-sitter facts only (see ``find_sites``)."""
    given = holes or {}
    check_hole_names(rules, given)
    values = {r.name: resolve_holes(r, given) for r in rules}  # refuse bad values up front
    return compose(unit, find_sites(unit, rules, given, spec, clang), values,
                   Judge(given, spec, clang)).note_rounds()


def apply_site(unit: Unit, site: Site, holes: dict[str, str] | None = None,
               spec: Spec | Bound | None = None) -> Outcome:
    """Apply one site (from ``find_sites`` on this unit) with the given hole values (the
    rest take their defaults); the guards are evaluated again with these values, so a site
    that was "unknown" until its holes were filled is refused here when they fail.
    Returns the checked new source; ``outcome.refused`` holds the site when it is refused."""
    given = holes or {}
    rule = site.rule
    check_hole_names([rule], given)
    values = {rule.name: resolve_holes(rule, given)}
    again = [s for s in find_sites(unit, [rule], given, spec)
             if s.match.start == site.match.start and s.match.end == site.match.end]
    if not again:
        raise KlcError(f"{unit.where(site.match.start)}: rule {rule.name} no longer matches "
                       "here (the site is not from this unit)")
    return compose(unit, again[:1], values, Judge(given, spec, True)).note_rounds()


def _spec_kernel(unit: Unit) -> str | None:
    """The name of the kernel the unit's klc-spec describes (None without a usable one),
    read once per unit (every rule that changes the launch asks)."""
    def read() -> str | None:
        try:
            spec = spec_of(unit)
        except KlcError:
            return None
        return spec.kernel_name if spec is not None else None  # type: ignore[attr-defined]

    return unit_memo(unit, "spec_kernel", read)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Judge:
    """What judging sites again on rewritten code needs: the hole values given, the spec
    (read again from the new code once the launch changed) and whether libclang may be
    asked."""

    holes: dict[str, str]
    spec: Spec | Bound | None
    clang: bool


# the rounds of one run: a site whose verdict read a fact another site changed is judged
# again on the rewritten code, once per round, and left for the next run after the last
MAX_ROUNDS = 16


def compose(unit: Unit, sites: list[Site], values: dict[str, dict[str, str]], judge: Judge,
            rounds: int = MAX_ROUNDS) -> Outcome:
    """Apply the sites of one run so that the result is what applying them one after
    another would give, each judged on the code before it (``klc.edits.facts``): a site
    whose guards read a fact an earlier site of the run changes waits; the others are
    applied together; then the waiting sites are found again in the rewritten code, judged
    there, and applied or refused, round after round. Each is said in ``outcome.notes`` or
    ``outcome.skipped``."""
    outcome, waiting, moves = _apply_round(unit, sites, values, judge.spec)
    if not waiting:
        return outcome
    if rounds <= 1:
        outcome.skipped += [(site, f"{why}: left for the next run") for site, why in waiting]
        return outcome
    new_unit = parse_bytes(outcome.source, unit.path)
    spec = judge.spec
    if spec is not None and any(rw.launch for rw in outcome.applied):
        try:  # the spec the next round judges with: the launch changed in its text
            fresh = spec_of(new_unit)
        except KlcError:
            fresh = None
        spec = replace(spec, spec=fresh) if isinstance(spec, Bound) and fresh is not None \
            else fresh
    found = {(s.rule.name, s.match.start): s for s in find_sites(
        new_unit, list({id(s.rule): s.rule for s, _ in waiting}.values()), judge.holes, spec,
        judge.clang)}
    again: list[Site] = []
    origin: dict[int, tuple[Site, str]] = {}
    for site, why in waiting:
        at = moves.new_offset(site.match.start)
        now = found.get((site.rule.name, at)) if at is not None else None
        if now is None:
            outcome.skipped.append((site, f"{why}: no longer matches the rewritten code"))
        elif not now.ok:
            outcome.skipped.append((site, f"{why}: judged again on the rewritten code, "
                                    f"refused: {now.reason}"))
        else:
            again.append(now)
            origin[id(now.match)] = (site, why)
    if not again:
        return outcome
    later = compose(new_unit, again, values, Judge(judge.holes, spec, judge.clang), rounds - 1)
    for rw in later.applied:  # (every site of a later round stems from one of this round)
        inner = later.origin.get(id(rw))
        outcome.origin[id(rw)] = origin[id(inner[0].match if inner else rw.match)]
    outcome.applied += later.applied
    outcome.skipped += [(origin[id(s.match)][0], w) for s, w in later.skipped]
    outcome.refused += later.refused
    outcome.notes += later.notes
    outcome.source = later.source
    return outcome


def _apply_round(unit: Unit, sites: list[Site], values: dict[str, dict[str, str]],
                 spec: Spec | Bound | None) -> tuple[Outcome, list[tuple[Site, str]], Moves]:
    """One round: the sites planned against ``unit`` and applied together, each site whose
    guards read a fact that a site taken before it changes left waiting (with why); where
    the old offsets went."""
    outcome = Outcome(unit, unit.source)
    moves = Moves()
    edits: list[ByteEdit] = []
    launch: list[tuple[str, tuple[str, str, str, int]]] = []  # (kernel, change)
    spec_kernel = _spec_kernel(unit) if any(s.ok and s.rule.changes_launch for s in sites) \
        else None
    taken: list[tuple[int, int]] = []
    seen_text: set[tuple[int, int, str]] = set()
    changed: list[tuple[Site, facts.Footprint]] = []  # what each site taken changes
    waiting: list[tuple[Site, str]] = []
    for site in sites:
        if not site.ok:
            outcome.refused.append(site)
            continue
        rw = plan(site.match, {**values[site.rule.name], **site.holes})
        hidden = hidden_text(unit, rw.edits)
        if hidden is not None:
            outcome.skipped.append((site, hidden))
            continue
        kernel = site.match.function.name if site.match.function is not None else ""
        if rw.launch:  # the launch must change where the file records it (spec, launches)
            why = host_launch.refusal(unit, kernel, rw.launch, kernel == spec_kernel) or \
                host_launch.bounds_refusal(GuardContext(site.match, {}, spec), rw.launch)
            if why is not None:
                outcome.skipped.append((site, why))
                continue
        # an edit that claims the whole match (a replace: its edit may have shrunk to the
        # tokens it changes, but a match that overlaps this one was judged on code this one
        # rewrites)
        m = site.match
        spans = [(min(e.start, m.start), max(e.end, m.end)) for e in rw.edits
                 if e.claims_match]
        clash = next(((s, e) for s, e in spans for ts, te in taken if s < te and ts < e), None)
        if clash is not None:
            outcome.skipped.append((site, "overlaps a site rewritten earlier in this run"))
            continue
        stale = _stale(site, rw, changed)
        if stale is not None:
            waiting.append((site, stale))
            continue
        changed.append((site, facts.changes(unit, rw)))
        taken.extend(spans)
        for e in rw.edits:
            key = (e.start, e.end, e.text)
            if key not in seen_text:  # one __shared__ declaration per kernel, not per site
                seen_text.add(key)
                edits.append(e)
        seen_here: dict[Any, int] = {}
        for change in rw.launch:  # a change another site of the run made already is made
            # once; one a site makes twice (grid.x /= 4 and grid.x /= ?v at ?v = 4), twice
            seen_here[change] = seen_here.get(change, 0) + 1
            if launch.count((kernel, change)) < seen_here[change]:
                launch.append((kernel, change))
        outcome.applied.append(rw)
    if not outcome.applied:
        return outcome, waiting, moves
    kernels = list(dict.fromkeys(k for k, _ in launch))
    for k in kernels:  # the kernel's launches in this file take the same changes
        edits += host_launch.host_edits(unit, k, [c for kk, c in launch if kk == k])
    spans: list[tuple[int, int, int, int]] = []
    new = apply_edits(unit.source, edits, spans)
    moves.add(spans)
    if spec_kernel in kernels:  # and its spec, which the gate runs
        mine = [c for k, c in launch if k == spec_kernel]
        for change in mine:
            before, new = new, _change_launch(new, [change])
            moves.add_diff(before, new)
        if not host_launch.launches_of(unit, spec_kernel):
            outcome.notes.append(
                f"`{spec_kernel}` is launched nowhere in this file: only its klc-spec's launch "
                f"changed ({host_launch.describe(mine)}); its callers elsewhere must launch "
                "it so")
    _reparse_check(unit, new, outcome, None if launch else _changes(edits))
    outcome.source = new
    return outcome, waiting, moves


def _stale(site: Site, rw: Rewrite, changed: list[tuple[Site, facts.Footprint]]) -> str | None:
    """Why a site's verdict is stale: a site of another rule taken before it in this run
    changes a fact its match or guards read (``klc.edits.facts``); None when none does. The
    sites of one rule are planned together (their launch changes are made once for all)."""
    if not changed:
        return None
    read = facts.reads(site.match, rw, facts.rule_facts(site.rule) | (
        {"code"} if implied_fresh(site.rule) else set()))
    for other, footprint in changed:
        if other.rule is site.rule:
            continue
        why = facts.conflict(footprint, read, site.match.unit)
        if why is not None:
            return f"{other.rule.name} ({site.match.unit.where(other.match.start)}) {why}"
    return None


def _change_launch(source: bytes, changes: list[tuple[str, str, str, int]]) -> bytes:
    """The spec block's grid and block with the changes (``klc.spec.scale_launch``)."""
    from klc.spec import scale_launch
    from klc.spec.launch import swap_launch

    for dim, axis, op, factor in changes:
        source = swap_launch(source, dim, axis, "xyz"[factor]) if op == "<->" else \
            scale_launch(source, dim, axis, op, factor)
    return source


def _changes(edits: list[ByteEdit]) -> list[tuple[int, int, int]]:
    """The edits as ``(start, end, new length)`` spans of the old source, sorted, touching
    ones merged (insertions at one offset): what ``parse_bytes(previous=...)`` takes."""
    spans: list[tuple[int, int, int]] = []
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        length = len(e.text.encode())
        if spans and e.start <= spans[-1][1]:
            start, end, n = spans[-1]
            spans[-1] = (start, max(end, e.end), n + length)
        else:
            spans.append((e.start, e.end, length))
    return spans


def _reparse_check(unit: Unit, new: bytes, outcome: Outcome,
                   changes: list[tuple[int, int, int]] | None = None) -> None:
    """Parse the rewritten text (incrementally from the unit's tree, given the changes) and
    refuse the rewrite if it has a syntax problem the original did not have."""
    after = parse_bytes(new, unit.path, previous=(unit, changes) if changes is not None
                        else None)
    before = {p.message for p in unit.problems}
    fresh = [p for p in after.problems if p.message not in before]
    if not fresh and len(after.problems) > len(unit.problems):
        fresh = after.problems  # the same message again, but one problem more
    if fresh:
        names = ", ".join(sorted({rw.match.rule.name for rw in outcome.applied}))
        raise KlcError(f"{fresh[0].describe(unit.path)} (in the rewritten text): the rewrite by "
                       f"{names} produces a syntax error, so it was refused and nothing written")
