"""How ``klc.pipeline.find_sites`` shares work between the matches of one rule: the matches
whose guard verdict depends only on the declarations their metavariables name share one
verdict (``guard_vars``, ``guard_key``), and the uses of one declaration that a qualifier rule
edits are one site (``declaration_edits``, ``declaration_key``); ``Locals`` resolves a use to
its declaration as the guards do."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

from klc.analysis.declarations import declarations_named
from klc.cuda.model import Function, Unit
from klc.guards import traits
from klc.match import Match, Pattern, pattern_of
from klc.match.scope import Scope
from klc.rule import Rule
from klc.rule.fresh import declared_idents, implied_fresh, required_fresh
from klc.rule.guard import GuardAnd, GuardCall, GuardExpr, calls
from klc.rule.model import TYPE_KINDS
from klc.rule.scopes import anchor_runs


def guard_vars(rule: Rule) -> tuple[str, ...] | None:
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


class Locals:
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


def guard_key(m: Match, names: tuple[str, ...], locals_: Locals) -> tuple[object, ...] | None:
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


def declaration_edits(rule: Rule) -> tuple[str, ...]:
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


def parameter_target(rule: Rule) -> str | None:
    """The metavariable whose declaration a rule edits (``declaration_edits``: one) when its
    guard requires, as a term of its top-level ``and``, that it names a parameter
    (``is_kernel_param``): then only the first use of each parameter of a function can be an
    applicable site, and ``klc.match.find.first_per_name`` finds those alone. None for any
    other rule."""
    targets = declaration_edits(rule)
    guard = rule.guard
    if len(targets) != 1 or guard is None:
        return None
    for term in guard.operands if isinstance(guard, GuardAnd) else (guard,):
        if isinstance(term, GuardCall) and term.name == "is_kernel_param" \
                and [(a.kind, a.value) for a in term.args] == [("metavar", targets[0])]:
            return targets[0]
    return None


def declaration_key(m: Match, targets: tuple[str, ...], locals_: Locals
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


def first_uses(found: list[Match], targets: tuple[str, ...], locals_: Locals,
               known: dict[int, object] | None = None) -> list[int]:
    """The indices of the matches that are sites of their own for a rule that edits the
    declarations ``targets`` name: the first use of each declaration (``declaration_key``)
    and every match whose key is None, in order. One pass with the common case (one target)
    inline; ``known``: the keys found already for that target, by match (the rules whose
    ``anchor any`` share a branch share its matches)."""
    out: list[int] = []
    seen: set[object] = set()
    if len(targets) != 1:
        for i, m in enumerate(found):
            key = declaration_key(m, targets, locals_)
            if key is None:
                out.append(i)
            elif key not in seen:
                seen.add(key)
                out.append(i)
        return out
    target = targets[0]
    before = locals_.before
    if known is None:
        known = {}
    for i, m in enumerate(found):
        key = known.get(id(m), _UNSET)
        if key is _UNSET:
            fn = m.function
            b = m.bindings.get(target)
            name = b.text.strip() if b is not None else ""
            key = known[id(m)] = None if fn is None or not name.isidentifier() else \
                (fn.start, ((name, before(fn, name, m.start)),))
        if key is None:
            out.append(i)
        elif key not in seen:
            seen.add(key)
            out.append(i)
    return out


_UNSET = object()


class RuleFacts(NamedTuple):
    """What ``klc.pipeline.find_sites`` reads of a rule, the same in every unit
    (``rule_facts``)."""

    targets: tuple[str, ...]  # ``declaration_edits``
    guard_vars: tuple[str, ...] | None  # ``guard_vars``
    has_within: bool  # a ``rewrite within``
    fresh: tuple[str, ...]  # ``implied_fresh``: ident holes the rewrite declares
    launch_edits: str  # the launch changes the rewrite makes, as the rule writes them
    typed: tuple[tuple[str, str], ...]  # ``metavar $X: pointer`` and the like
    parameter_target: str | None  # ``parameter_target``
    # the ident holes its rewrites declare that have a default, and whether the guard itself
    # requires them fresh (``klc.guards.loops.fresh_defaults``)
    declared: tuple[tuple[str, bool], ...]
    runs: bool  # the anchor binds a run (``klc.rule.scopes.anchor_runs``)
    guard_holes: frozenset[str] | None  # ``guard_holes``


def rule_facts(rule: Rule) -> RuleFacts:
    """What ``find_sites`` reads of a rule: stored with the compiled library
    (``facts_table``), or worked out once per process."""
    got = _STORED_FACTS.get(rule)
    return got if got is not None else _rule_facts(rule)


# the facts stored with a compiled library (``seed_facts``), by rule
_STORED_FACTS: dict[Rule, RuleFacts] = {}
_MAX_STORED_FACTS = 4096


def facts_table(rules: list[Rule] | tuple[Rule, ...]) -> dict[Rule, RuleFacts]:
    """The facts of these rules and of the rules nested in their edits, to be stored beside
    them (reading a rule's guard and rewrites for them costs a tenth of a second for a
    library: most of a one-file listing's own work)."""
    table = {}
    todo = list(rules)
    while todo:
        rule = todo.pop()
        todo.extend(sub for e in rule.edits for sub in e.subrules())
        table[rule] = _rule_facts(rule)
    return table


def seed_facts(table: object) -> None:
    """Take facts ``facts_table`` gave (read back from the cache): a TypeError, and nothing
    taken, when it is not such a table."""
    if not isinstance(table, dict) or not all(
            isinstance(k, Rule) and isinstance(v, RuleFacts) for k, v in table.items()):
        raise TypeError("not a table of rule facts")
    if len(_STORED_FACTS) + len(table) > _MAX_STORED_FACTS:
        _STORED_FACTS.clear()
    _STORED_FACTS.update(table)


@lru_cache(maxsize=1024)
def _rule_facts(rule: Rule) -> RuleFacts:
    return RuleFacts(
        declaration_edits(rule), guard_vars(rule), any(e.subrules() for e in rule.edits),
        tuple(implied_fresh(rule)),
        "; ".join(line.strip().removeprefix("rewrite launch ")
                  for e in rule.edits if e.changes_launch for line in e.lines(rule)),
        tuple((n, k) for n, k in rule.metavar_kinds if k in TYPE_KINDS),
        parameter_target(rule),
        tuple((h, h in required_fresh(rule.guard)) for h in declared_idents(rule)
              if rule.holes[h].default is not None),
        bool(anchor_runs(rule)), guard_holes(rule.guard))


def guard_holes(guard: GuardExpr | None) -> frozenset[str] | None:
    """The holes a guard reads by name (``?h`` arguments); None when it reads every hole
    (``smem_fits`` fills the rewrite's templates with their values)."""
    out: set[str] = set()
    for call in calls(guard) if guard is not None else ():
        if call.name == "smem_fits":
            return None
        out.update(str(a.value) for a in call.args if a.kind == "hole")
    return frozenset(out)


def reads_holes(read: frozenset[str] | None, holes: set[str]) -> bool:
    """Whether a guard that reads ``read`` (``guard_holes``) may depend on these holes."""
    return read is None or not read.isdisjoint(holes)


def parameter_names(fn: Function) -> list[str]:
    """The names of a function's parameters (``klc.match.find.first_per_name``)."""
    return [p.name for p in fn.params]


def pointer_parameter_names(fn: Function) -> list[str]:
    """The names of a function's pointer and array parameters: those a ``metavar $X:
    pointer`` target can name (a use of any other parameter resolves to a declaration that
    is not a pointer, which ``klc.analysis.types.has_type_kind`` refuses)."""
    return [p.name for p in fn.params if p.pointer > 0 or p.array]


class RulePlan(NamedTuple):
    """What ``find_sites`` reads of a rule before its first match, the same in every unit:
    its pattern, where it may apply (``scope_of``: None with ``refused``), the parameter whose
    first uses alone can apply (``klc.site_keys.parameter_target``) and whether it must be a
    pointer, and the key its matches are shared under (the anchor and the scope)."""

    rule: Rule
    pattern: Pattern
    scope: Scope | None
    target: str | None
    pointers: bool
    anchor: str


# the plans of the rule lists ``find_sites`` was given last, by (list, refused): a listing
# passes one list for every file, and each rule's plan costs hashing and formatting per file
_RULE_PLANS: dict[tuple[int, bool], tuple[tuple[Rule, ...], tuple[RulePlan, ...]]] = {}
_MAX_RULE_PLANS = 8


def rule_plans(rules: list[Rule], refused: bool,
               scope_of: Callable[[Rule], Scope | None]) -> tuple[RulePlan, ...]:
    """The rules' plans, made once per list of rules (the same rule objects, in order):
    ``scope_of`` gives where a rule may apply (``klc.pipeline``'s context clause)."""
    held = _RULE_PLANS.get((id(rules), refused))
    if held is not None and len(held[0]) == len(rules) and all(
            a is b for a, b in zip(held[0], rules, strict=True)):
        return held[1]
    plans = []
    for rule in rules:
        pattern = pattern_of(rule)
        scope = None if refused else scope_of(rule)
        target = None if refused else rule_facts(rule).parameter_target
        pointers = target is not None and (target, "pointer") in rule_facts(rule).typed
        anchor = anchor_key(pattern, scope)
        plans.append(RulePlan(rule, pattern, scope, target, pointers, anchor))
    if len(_RULE_PLANS) >= _MAX_RULE_PLANS:
        _RULE_PLANS.clear()
    _RULE_PLANS[(id(rules), refused)] = (tuple(rules), tuple(plans))
    return tuple(plans)


def anchor_key(pattern: Pattern, scope: Scope | None) -> str:
    """The key an anchor's matches are shared under: its pattern's, and the scope."""
    if scope is None:
        return pattern.key
    text = _SCOPE_TEXT.get(scope)
    if text is None:  # (a named tuple's text is made in Python: once per scope)
        text = _SCOPE_TEXT[scope] = f"\0{scope}"
    return pattern.key + text


_SCOPE_TEXT: dict[Scope, str] = {}
