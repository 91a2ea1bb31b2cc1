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

import bisect
import operator
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from tree_sitter import Node

from klc.analysis.declarations import declaration_signatures, declarations_named
from klc.analysis.tree import unit_memo
from klc.analysis.types import has_type_kind
from klc.cuda.model import Function, Problem, Unit
from klc.cuda.parse import parse_bytes
from klc.cuda.syntax import LOOP_TYPES
from klc.edits import ByteEdit, Rewrite, apply_edits, host_launch, plan
from klc.edits.render import render
from klc.edits.within import sub_matches, why_none
from klc.errors import KlcError
from klc.guards import GuardContext, Verdict, evaluate, traits, with_trait
from klc.guards.loops import evaluate_declared
from klc.match import Match, Pattern, find_matches, index_nodes
from klc.match import pattern_of as _pattern_of
from klc.rule.fresh import implied_fresh
from klc.rule.guard import calls
from klc.rule.model import TYPE_KINDS

if TYPE_CHECKING:
    from klc.rule import Rule
    from klc.spec import Bound, Spec


@dataclass
class Site:
    """A match of a rule, and whether its context and guards hold there."""

    rule: Rule
    match: Match
    ok: bool
    reason: str  # why not, when not ok; "" when ok
    stage: str  # the stage that refused it: "context" | "region" | "guard" | ""

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

    @property
    def changed(self) -> bool:
        return self.source != self.unit.source


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
               spec: Spec | Bound | None = None, clang: bool = True) -> list[Site]:
    """Every match of every rule in the unit, with its verdict, in source order. With
    ``clang=False`` the guards use tree-sitter facts only (no libclang parse): faster, and
    a guard that needs clang fails closed, saying so.

    Each rule's matches go through the stages in order: 1. match (``_SiteCaches.matches``),
    2. context, 3. region, 4. guards (``_RuleSites.site``). Work is shared where the answer
    cannot differ (``_SiteCaches``): rules with the same anchor share one matching pass; a
    guard made only of predicates whose verdict is shared per declaration
    (``klc.guards.Traits.per_declaration``) is judged once per function and declarations its
    metavariables name (``_guard_key``), not once per use."""
    caches = _SiteCaches(unit, rules)
    sites: list[Site] = []
    for rule, pattern in zip(rules, caches.patterns, strict=True):
        found = caches.matches(pattern)  # 1. match
        if found:
            judge = _RuleSites(caches, rule, pattern.key, found, holes or {}, spec, clang)
            sites += filter(None, (judge.site(i) for i in range(len(found))))
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

    def __init__(self, unit: Unit, rules: list[Rule]) -> None:
        self.unit = unit
        self.patterns = [pattern_of(r) for r in rules]
        self.candidates = index_nodes(unit, {p.root_type for p in self.patterns})
        self.locals = _Locals(unit)
        self.by_anchor: dict[str, list[Match]] = {}
        # per (anchor, targets or guard metavariables): one key per match, the declarations
        # it names (``_declaration_key``, ``_guard_key``)
        self.site_keys: dict[tuple[str, tuple[str, ...]], list[object]] = {}
        self.guard_keys: dict[tuple[str, tuple[str, ...]], list[object]] = {}
        # predicate verdicts at one match, by (anchor, match): shared by the rules that share
        # the anchor, except for predicates that read the rule (``GuardContext.memo``)
        self.memos: dict[tuple[str, int], dict[tuple[object, ...], Verdict]] = {}
        # guard verdicts by (guard number, ``_guard_key``): equal guards, one number
        self.verdicts: dict[tuple[object, ...], Verdict] = {}
        self.guard_ids: dict[object, int] = {}

    def matches(self, pattern: Pattern) -> list[Match]:
        """The matches of an anchor: found once for all the rules that share it."""
        found = self.by_anchor.get(pattern.key)
        if found is None:
            found = self.by_anchor[pattern.key] = list(
                find_matches(pattern, self.unit, None, self.candidates))
        return found

    def memo(self, anchor: str, i: int) -> dict[tuple[object, ...], Verdict]:
        return self.memos.setdefault((anchor, i), {})


class _RuleSites:
    """One rule's matches through the stages after matching: context, region, guards (and a
    ``within`` edit's sub-matches), each refused match with the stage that refused it."""

    def __init__(self, caches: _SiteCaches, rule: Rule, anchor: str, found: list[Match],
                 holes: dict[str, str], spec: Spec | Bound | None, clang: bool) -> None:
        self.caches, self.rule, self.anchor, self.found = caches, rule, anchor, found
        self.holes = resolve_holes(rule, holes, strict=False)
        self.spec, self.clang = spec, clang
        self.targets = _declaration_edits(rule)  # uses of one declaration: one site
        self.site_keys: list[object] = []
        if self.targets:
            keys = caches.site_keys.get((anchor, self.targets))
            if keys is None:
                keys = caches.site_keys[(anchor, self.targets)] = [
                    _declaration_key(m, self.targets, caches.locals) for m in found]
            self.site_keys = keys
        self.seen: set[object] = set()
        self.guard_vars = _guard_vars(rule)  # a guard judged once per declaration
        self.guard_keys: list[object] = []
        if self.guard_vars is not None:
            self.guard_keys = caches.guard_keys.setdefault((anchor, self.guard_vars),
                                                           [_UNSET] * len(found))
            self.guard_id = caches.guard_ids.setdefault(rule.guard, len(caches.guard_ids))
        self.has_within = any(e.subrules() for e in rule.edits)  # rewrite within
        self.fresh = implied_fresh(rule)  # ident holes the rewrite declares as variables
        # the launch changes the rewrite makes (as the rule writes them), "" for none
        self.launch_edits = "; ".join(line.strip().removeprefix("rewrite launch ")
                                      for e in rule.edits if e.changes_launch
                                      for line in e.lines(rule))
        self._spec_kernel: object = _UNSET
        self.device_names = device_only_names(rule)
        self.typed = [(n, k) for n, k in rule.metavar_kinds if k in TYPE_KINDS]
        # a context that reads only the function: judged once per function
        self.by_function = set(rule.context) <= {"any", "global", "device"}
        self.contexts: dict[int, str] = {}
        self.no_problems = not caches.unit.problems

    def site(self, i: int) -> Site | None:
        """The site of match ``i``; None when it is no site of its own (another use of the
        same declaration, or a binding of another type than ``metavar $X: pointer`` says)."""
        if self.targets:
            key = self.site_keys[i]
            if key is not None:
                if key in self.seen:
                    return None  # another use of the same variable: the same site
                self.seen.add(key)
        shared, rule = self.found[i], self.rule
        m = Match(rule, self.caches.unit, shared.function, shared.start, shared.end, shared.nodes,
                  shared.bindings, obligations=shared.obligations)
        if (self.typed or m.obligations) and not self.types_hold(m, i):
            return None
        why = self.context(m)  # 2. context
        if why:
            return Site(rule, m, False, why, "context")
        problem = None if self.no_problems else error_region(m)  # 3. region
        if problem is not None:
            return Site(rule, m, False, "inside a syntax-error region: "
                        + problem.describe(self.caches.unit.path), "region")
        if rule.guard is not None:  # 4. guards
            verdict = self.guard(m, i)
            if not verdict.ok:
                return Site(rule, m, False, verdict.reason, "guard")
        if self.fresh:  # the names the rewrite declares: fresh_name(?h), implied
            refused = evaluate_declared(self.fresh, self.context_of(m, i))
            if refused is not None:
                return Site(rule, m, False, refused.reason, "guard")
        if self.launch_edits:  # the launch it changes must be recorded in the file
            kernel = m.function.name if m.function is not None else ""
            why = host_launch.unrecorded(self.caches.unit, kernel,
                                         kernel == self.spec_kernel(), self.launch_edits)
            if why is not None:
                return Site(rule, m, False, why, "guard")
        if self.has_within:
            m.subs = sub_matches(m, self.holes, self.spec, self.clang)
            if not m.subs.count:
                return Site(rule, m, False, why_none(m, m.subs), "guard")
        return Site(rule, m, True, "", "")

    def spec_kernel(self) -> str | None:
        """The kernel the spec describes: the one given, else the unit's own (as applying
        the site reads it)."""
        if self._spec_kernel is _UNSET:
            spec = self.spec
            self._spec_kernel = getattr(spec, "spec", spec).kernel_name \
                if spec is not None else _spec_kernel(self.caches.unit)  # (a Bound wraps one)
        return self._spec_kernel  # type: ignore[return-value]

    def context_of(self, m: Match, i: int) -> GuardContext:
        return GuardContext(m, self.holes, self.spec, self.clang,
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

    def guard(self, m: Match, i: int) -> Verdict:
        """The rule's guard at match ``i``: judged once per function and declarations where
        its predicates allow (``_guard_key``), else at this match."""
        assert self.rule.guard is not None
        key: tuple[object, ...] | None = None
        if self.guard_vars is not None:
            gkey = self.guard_keys[i]
            if gkey is _UNSET:
                gkey = self.guard_keys[i] = _guard_key(m, self.guard_vars, self.caches.locals)
            if gkey is not None:
                key = (self.guard_id, gkey)
        verdicts = self.caches.verdicts
        verdict = verdicts.get(key) if key is not None else None
        if verdict is None:
            verdict = evaluate(self.rule.guard, self.context_of(m, i))
            if key is not None:
                verdicts[key] = verdict
        return verdict


def _guard_vars(rule: Rule) -> tuple[str, ...] | None:
    """The metavariables a rule's guard reads, when the guard is made only of predicates
    whose verdict is shared per declaration (``klc.guards.Traits.per_declaration``) with
    constant or ``kernel`` arguments besides them: its verdict then depends only on the
    enclosing function and on what those metavariables name (``_guard_key``). None when the
    guard reads anything else (a position, a loop, the anchor's text)."""
    if rule.guard is None:
        return None
    names: set[str] = set()
    for call in calls(rule.guard):
        t = traits(call.name)
        if t is None or not t.per_declaration:
            return None
        for a in call.args:
            if a.kind == "metavar":
                names.add(str(a.value))
            elif a.kind not in ("string", "int", "float", "op") \
                    and (a.kind, a.value) != ("name", "kernel"):
                return None  # a position (anchor, loop), a sequence, a hole: per use
    return tuple(sorted(names))


class _Locals:
    """The closest local declaration of a name before an offset in a function (as
    ``klc.analysis.declarations.lookup`` resolves a use), by bisection over the starts of
    the name's declarations in the function's body: one sorted list per function and name."""

    def __init__(self, unit: Unit) -> None:
        self.unit = unit
        self.starts: dict[tuple[int, int, str], list[int]] = {}

    def before(self, fn: Function, name: str, offset: int) -> int:
        """The start of the last declaration of ``name`` in ``fn``'s body that starts
        before ``offset``, or -1."""
        key = (fn.start, fn.body_start, name)
        starts = self.starts.get(key)
        if starts is None:  # (declarations come in source order)
            starts = self.starts[key] = [d.start for d in declarations_named(self.unit, name)
                                         if fn.body_start <= d.start]
        if not starts:
            return -1  # (most names: parameters, no local of that name)
        i = bisect.bisect_left(starts, offset) - 1
        return starts[i] if i >= 0 else -1


def _guard_key(m: Match, names: tuple[str, ...], locals_: _Locals) -> tuple[object, ...] | None:
    """(function, each metavariable's text and the declaration it resolves to at its use:
    the closest preceding local of the function, else the parameter), as the declaration
    predicates resolve it; None (judge this use on its own) when a metavariable binds
    anything but a plain identifier, or a name that is neither a local nor a parameter."""
    fn = m.function
    if fn is None:
        return None
    key: list[object] = [fn.start, fn.end]
    for name in names:
        b = m.bindings.get(name)
        if b is None or len(b.nodes) != 1 or b.nodes[0].type != "identifier":
            return None
        text = b.text
        local = locals_.before(fn, text, b.start)
        if local < 0 and fn.param(text) is None:
            return None
        key += (text, local)
    return tuple(key)


def _declaration_edits(rule: Rule) -> tuple[str, ...]:
    """The metavariables whose declarations a rule edits, when that is all it does and its
    guards read nothing else (then every use of one variable in a function is the same site:
    a qualifier rule anchored on each use of a pointer, ``$X[$I]``, is reported and judged once
    per declaration). The region ``kernel`` is the whole function, the same from every use.
    Empty when the rule does anything else."""
    targets = tuple(e.declaration_target() for e in rule.edits)
    if not targets or None in targets:  # an edit of the code itself (not a qualifier)
        return ()
    if rule.guard is not None:
        for call in calls(rule.guard):
            for a in call.args:
                if a.kind == "sequence" or (a.kind == "name" and a.value != "kernel") or (
                        a.kind == "metavar" and a.value not in targets):
                    return ()  # a guard that reads the position or another binding
    return targets


def _declaration_key(m: Match, targets: tuple[str, ...], locals_: _Locals
                     ) -> tuple[int, tuple[object, ...]] | None:
    """(function, what each target names) when every target binds a plain name: the
    declaration a use resolves to, as the guards resolve it (the closest preceding local of
    the function, else the parameter or global), so that uses meaning the same declaration
    share a key. None when a target is not a plain name."""
    fn = m.function
    if fn is None:
        return None
    names: list[object] = []
    for t in targets:
        b = m.bindings.get(t)
        name = b.text.strip() if b is not None else ""
        if not name.isidentifier():
            return None
        names.append((name, locals_.before(fn, name, m.start)))
    return fn.start, tuple(names)


def resolve_holes(rule: Rule, given: dict[str, str], strict: bool = True) -> dict[str, str]:
    """Hole values for a rule: given ones validated against their domain, else defaults.

    With ``strict``, a hole that has neither a value nor a default is an error (before any
    rewrite happens); otherwise it stays unfilled, for listing.
    """
    values: dict[str, str] = {}
    for name, decl in rule.holes.items():
        if name in given:
            try:
                values[name] = decl.validate(given[name])
            except KlcError as e:  # (the rule that declares the hole, by file:line:col)
                raise KlcError(f"{rule.location}: {rule.name}: {e}") from None
        elif decl.default is not None:
            values[name] = str(decl.default)
        elif strict:
            raise KlcError(f"{rule.location}: hole ?{name} needs a value "
                           f"(--hole {name}=…); {_domain_words(decl)}")
    return values


def _domain_words(decl: object) -> str:
    values = getattr(decl, "values", None)
    lo, hi = getattr(decl, "lo", None), getattr(decl, "hi", None)
    if values:
        return "one of {" + ", ".join(str(v) for v in values) + "}"
    if lo is not None and hi is not None:
        return f"an integer in {lo}..{hi}"
    return f"a {getattr(decl, 'type', 'value')}"


def check_hole_names(rules: list[Rule], given: dict[str, str]) -> None:
    """Refuse a --hole that no selected rule declares (a typo must not pass silently)."""
    declared = {name for r in rules for name in r.holes}
    for name in given:
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise KlcError(f"--hole {name}: no selected rule declares a hole ?{name} "
                           f"(declared: {known})")


def apply_rules(unit: Unit, rules: list[Rule], holes: dict[str, str] | None = None,
                spec: Spec | Bound | None = None, clang: bool = True) -> Outcome:
    """Apply every applicable site of the rules once; return the checked new source.
    ``clang=False``: guards on tree-sitter facts only (see ``find_sites``)."""
    given = holes or {}
    check_hole_names(rules, given)
    values = {r.name: resolve_holes(r, given) for r in rules}  # refuse bad values up front
    return _apply_sites(unit, find_sites(unit, rules, given, spec, clang), values)


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
    return _apply_sites(unit, again[:1], values)


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


def _apply_sites(unit: Unit, sites: list[Site], values: dict[str, dict[str, str]]) -> Outcome:
    outcome = Outcome(unit, unit.source)
    edits: list[ByteEdit] = []
    launch: list[tuple[str, tuple[str, str, str, int]]] = []  # (kernel, change)
    spec_kernel = _spec_kernel(unit) if any(s.ok and s.rule.changes_launch for s in sites) \
        else None
    taken: list[tuple[int, int]] = []
    seen_text: set[tuple[int, int, str]] = set()
    applied: list[tuple[Site, Rewrite]] = []  # outcome.applied with their sites
    for site in sites:
        if not site.ok:
            outcome.refused.append(site)
            continue
        rw = plan(site.match, values[site.rule.name])
        hidden = _edits_hidden_text(unit, rw.edits)
        if hidden is not None:
            outcome.skipped.append((site, hidden))
            continue
        kernel = site.match.function.name if site.match.function is not None else ""
        if rw.launch:  # the launch must change where the file records it (spec, launches)
            why = host_launch.refusal(unit, kernel, rw.launch, kernel == spec_kernel)
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
        taken.extend(spans)
        for e in rw.edits:
            key = (e.start, e.end, e.text)
            if key not in seen_text:  # one __shared__ declaration per kernel, not per site
                seen_text.add(key)
                edits.append(e)
        for change in rw.launch:
            if (kernel, change) not in launch:
                launch.append((kernel, change))
        outcome.applied.append(rw)
        applied.append((site, rw))
    if not outcome.applied:
        return outcome
    stale = _stale_sites(unit, applied)
    if stale:  # judged on declarations that another site of this run changes: left for later
        keep = [s for s in sites if not s.ok or id(s) not in stale]
        again = _apply_sites(unit, keep, values)
        again.skipped[:0] = [(s, why) for s in sites if (why := stale.get(id(s)))]
        return again
    kernels = list(dict.fromkeys(k for k, _ in launch))
    for k in kernels:  # the kernel's launches in this file take the same changes
        edits += host_launch.host_edits(unit, k, [c for kk, c in launch if kk == k])
    new = apply_edits(unit.source, edits)
    if spec_kernel in kernels:  # and its spec, which the gate runs
        new = _change_launch(new, [c for k, c in launch if k == spec_kernel])
    _reparse_check(unit, new, outcome, None if launch else _changes(edits))
    outcome.source = new
    return outcome


# Masked text a rewrite may change: a ``#pragma`` line (the pragma rules add and remove them)
# and an attribute such as ``__align__(16)`` (a rule's template may spell a declaration
# without it, as single_buffer_tiles_to_plain does). Every other mask is code the parser
# never saw as written (a preprocessor directive, a branch of ``#if`` it did not take, a
# statement-like or specifier macro): a rewrite renders its replacement from the tree, so an
# edit over such text would drop it.
_EDITABLE_MASKS = frozenset({"pragma", "attribute"})


def _edits_hidden_text(unit: Unit, edits: list[ByteEdit]) -> str | None:
    """Why a site's byte edits may not be made, or None: an edit that drops masked text other
    than a pragma or an attribute (removes it, cuts into it or inserts inside it; a
    replacement that writes the whole of it again, as a bound metavariable does, keeps it),
    e.g. a loop header between ``#if`` and ``#else``, whose deletion would leave the
    ``#endif`` without its ``#if``."""
    for e in edits:
        for m in unit.masks:
            if m.reason in _EDITABLE_MASKS:
                continue
            inside = m.start < e.start < m.end if e.start == e.end else \
                e.start < m.end and m.start < e.end
            kept = e.start <= m.start and m.end <= e.end and \
                unit.source[m.start:m.end].decode(errors="replace").strip() in e.text
            if inside and not kept:  # kept: the replacement writes it again (a bound $X)
                text = unit.source[m.start:m.end].decode(errors="replace").strip()
                first = text.splitlines()[0] if text else ""
                shown = first if len(first) <= 40 else first[:37] + "..."
                return (f"its edit would change `{shown}` at {unit.where(m.start)} ({m.reason}: "
                        "text the parser did not see as code), which a rewrite never touches")
    return None


def _stale_sites(unit: Unit, applied: list[tuple[Site, Rewrite]]) -> dict[int, str]:
    """Sites of this run whose guards judged a variable's type or layout (a predicate whose
    traits say ``reads_layout``) where another applied site (of another rule) rewrites that
    variable's declaration into a different one (a padded tile row is no longer 16-byte
    aligned): ``id(site)`` -> why it waits. Such a site is judged again on the new code by
    the next run."""
    layout_predicates = with_trait(lambda t: t.reads_layout)
    changed: dict[str, str] = {}  # name -> the rule that redeclares it
    for site, rw in applied:
        decls = [n for n in site.match.nodes if n.type == "declaration"]
        if not decls:
            continue
        old: dict[str, object] = {}
        for node in decls:
            old.update(declaration_signatures(unit.text(node)))
        new: dict[str, object] = {}
        for e in rw.edits:
            if e.what == "replace" and e.start < site.match.end and site.match.start < e.end:
                new.update(declaration_signatures(e.text))
        for name, sig in old.items():
            if new.get(name) != sig:
                changed.setdefault(name, site.rule.name)
    if not changed:
        return {}
    stale: dict[int, str] = {}
    words = re.compile(r"\b(" + "|".join(map(re.escape, changed)) + r")\b")
    for site, _ in applied:
        rule = site.rule
        if rule.guard is None or not any(c.name in layout_predicates for c in calls(rule.guard)):
            continue  # its guards read no variable's type or layout
        m = site.match
        for found in words.finditer(unit.text(m.start, m.end)):
            name = found.group(1)
            if changed[name] != rule.name:
                stale[id(site)] = (f"uses `{name}`, whose declaration {changed[name]} "
                                   "rewrites in this run: it is judged again on the new "
                                   "code by the next run")
                break
    return stale


def _change_launch(source: bytes, changes: list[tuple[str, str, str, int]]) -> bytes:
    """The spec block's grid and block with the changes (``klc.spec.scale_launch``)."""
    from klc.spec import scale_launch

    for dim, axis, op, factor in changes:
        source = scale_launch(source, dim, axis, op, factor)
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
