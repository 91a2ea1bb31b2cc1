"""Statement dots judged on a whole match (``klc.rule.dots`` reads them): what the statements a
``...`` skipped may do. A match whose skipped statements break a clause is no match.

Default (no ``when any``): the skipped statements neither assign, increment nor store
through any identifier of what the anchor's one-node metavariables bound (``$R`` bound to
``row``: no ``row = ...``, no ``row[i] = ...``; a local pointer made from it counts as it,
``klc.analysis.writes._aliases``). ``when not writes(A)`` adds A (a metavariable: the
identifiers it bound; a plain name: itself) to that list, declarations of it included;
``when not mentions(A)``: no token of the skipped code is A; ``when not stores``: nothing in
it may write memory at all.

A name the skipped statements declare (``int n = B * T;``, straight in their block: a
declaration nested in one of them ends with it) is the run's own, for the code after it:
the match may read it there only, in the run's scope (after it, inside its block), never
before it or after the block, where the same word names something else (``scope_refusal``).
Where the match is a rule's, the rule's rewrite must write every metavariable that reads it
in the scope of the run's copy too (``rule_scope_refusal``, from ``klc.rule.scopes``): the
declaration then precedes each use, and the run, written back byte for byte and not
assigning the name (the default clause), leaves the value each use reads as it was. The
same holds for a ``$$$X`` run a rewrite writes back."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from klc.analysis.declarations import declarations_of, declared_names_in
from klc.analysis.tree import in_span, leaves_in, names_in, nodes_of
from klc.analysis.writes import aliases_of, is_assigned, writes_around, writes_to
from klc.rule.dots import RUN_PREFIX, Dots
from klc.rule.scopes import run_scopes

if TYPE_CHECKING:
    from tree_sitter import Node

    from klc.cuda.model import Function, Unit
    from klc.match.model import Binding, Match
    from klc.match.pattern import Pattern
    from klc.rule import Rule

_IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class _At:
    """The place the write analyses read (``klc.analysis.tree.Place``): a match, no spec."""

    match: Match
    unit: Unit
    function: Function | None
    spec: None = None
    clang: bool = False


def dots_hold(pattern: Pattern, match: Match) -> bool:
    """Whether every ``...`` of the match skipped only what its when clauses allow."""
    return dots_refusal(pattern, match) is None


def dots_refusal(pattern: Pattern, match: Match) -> str | None:
    """Why the statements some ``...`` skipped break its clauses, or None when none do."""
    at = _At(match, match.unit, match.function)
    bound = {n: b for n, b in match.bindings.items()
             if n not in pattern.seqs and not n.startswith(RUN_PREFIX)}
    default = frozenset(name for b in bound.values() for name in _names_of(b, match.unit))
    for d in pattern.dots:
        run = match.bindings.get(d.run)
        if run is None or d.any or run.start == run.end:
            continue
        why = scope_refusal(match, d.run) or _refusal(
            at, d, run.start, run.end, default, _resolve(d.writes, match), match)
        if why is not None:
            return why
    return None


def _refusal(at: _At, d: Dots, start: int, end: int, default: frozenset[str],
             listed: frozenset[str], match: Match) -> str | None:
    unit = at.unit
    where = unit.where(start)
    redeclared = declared_names_in(unit, start, end) & listed
    if redeclared:
        return f"the statements `...` skipped at {where} declare {sorted(redeclared)[0]}"
    for name in sorted(default | listed):
        if is_assigned(at, name, start, end):
            return f"the statements `...` skipped at {where} assign {name}"
        if next(writes_to(at, aliases_of(at, name), start, end), None) is not None:
            return f"the statements `...` skipped at {where} write through {name}"
    if d.mentions:
        tokens = set(leaves_in(unit, start, end))
        hit = sorted(_resolve(d.mentions, match) & tokens)
        if hit:
            return f"the statements `...` skipped at {where} mention {hit[0]}"
    if d.stores and any(start <= s and e <= end for s, e, _, _ in
                        writes_around(at, start, end)):
        return f"the statements `...` skipped at {where} store to memory"
    return None


def _resolve(args: tuple[str, ...], match: Match) -> frozenset[str]:
    """The names when clauses list: a metavariable's bound identifiers, a plain name."""
    out: set[str] = set()
    for a in args:
        if a.startswith("$"):
            b = match.bindings.get(a[1:])
            if b is not None:
                out |= _names_of(b, match.unit)
        else:
            out.add(a)
    return frozenset(out)


def _names_of(b: Binding, unit: Unit) -> set[str]:
    if not b.nodes:
        return set(_IDENT.findall(b.text))
    return {name for n in b.nodes for name, _ in names_in(n, unit.source)}


def rule_scope_refusal(rule: Rule, match: Match) -> str | None:
    """Why the rule's rewrite at this match would write a name one of the anchor's runs
    declares outside that run's scope (or the match reads it there), None when it keeps
    every use in place: ``klc.rule.scopes`` says, per run, which metavariables some edit
    writes outside it, and which a ``within`` block's sub-rules carry into a target."""
    scopes = run_scopes(rule)
    for run, outside in scopes.outside.items():
        why = scope_refusal(match, run, outside, scopes.carried, rule.sequence_metavars)
        if why is not None:
            return why
    return None


def scope_refusal(match: Match, run: str, outside: frozenset[str] = frozenset(),
                  carried: dict[str, frozenset[str]] | None = None,
                  seqs: frozenset[str] = frozenset()) -> str | None:
    """Why a name the run ``run`` (a ``$$$X`` name, a dots' ``__dots<i>``) declares straight
    in its block is read by the match outside the run's scope, or by a metavariable in
    ``outside`` (one the rewrite writes outside it), or by one that ``carried`` brings into a
    target whose code is not in the scope; None when none is. ``seqs``: the run
    metavariables, for the message."""
    b = match.bindings.get(run)
    if b is None or not b.nodes:
        return None
    unit = match.unit
    declared = _declared_by(unit, b)
    if not declared:
        return None
    block = b.nodes[0].parent
    scope_end = block.end_byte if block is not None else len(unit.source)
    what = (f"the statements `...` skipped at {unit.where(b.start)}"
            if run.startswith(RUN_PREFIX) else
            f"the statements `$$${run}` bound at {unit.where(b.start)}")
    copies: dict[str, list[tuple[int, int]]] | None = None
    for node in match.nodes:
        for name, ident in names_in(node, unit.source):
            at = ident.start_byte
            if name not in declared or b.start <= at < scope_end or _qualified(ident):
                continue
            if copies is None:
                copies = _own_declarations(match, declared, b.start)
            if any(s <= at < e for s, e in copies.get(name, ())):
                continue  # a declaration of its own there (another copy of the run)
            place = "before them" if at < b.start else "after their block"
            return (f"{what} declare {name}, which the match reads {place}, where it names "
                    f"something else ({unit.where(at)})")
    bindings = match.bindings
    for name in sorted(outside):
        other = bindings.get(name)
        hit = sorted(_names_of(other, unit) & declared) if other is not None else []
        if hit:
            return (f"{what} declare {hit[0]}, which `{_mark(name, seqs)}` reads, and "
                    f"the rewrite writes it before them or after their block")
    for target, inner in (carried or {}).items():
        code = bindings.get(target)
        if code is None or (b.end <= code.start and code.end <= scope_end):
            continue
        for name in sorted(inner):
            other = bindings.get(name)
            hit = sorted(_names_of(other, unit) & declared) if other is not None else []
            if hit:
                return (f"{what} declare {hit[0]}, which `{_mark(name, seqs)}` reads, and "
                        f"the rewrite writes it into `{_mark(target, seqs)}`, outside "
                        f"their scope")
    return None


def _own_declarations(match: Match, names: set[str], run_start: int
                      ) -> dict[str, list[tuple[int, int]]]:
    """The scopes (from the declaration to the end of its block, or of the for statement
    whose initialiser it is) of the declarations of ``names`` in the match whose scope does
    not hold the run: code there reads its own variable of that name (a second copy of a
    run bound twice, a loop's own variable), neither the run's nor one the run shadows."""
    unit = match.unit
    out: dict[str, list[tuple[int, int]]] = {}
    for node in in_span(nodes_of(unit, "declaration"), match.start, match.end):
        parent = node.parent
        end = parent.end_byte if parent is not None else len(unit.source)
        for d in declarations_of(unit, [node]):
            if d.name in names and not node.start_byte <= run_start < end:
                out.setdefault(d.name, []).append((node.start_byte, end))
    return out


def _qualified(ident: Node) -> bool:
    """``T::n``'s ``n``: a member of a namespace or class, never a local variable."""
    parent = ident.parent
    return parent is not None and parent.type == "qualified_identifier" \
        and parent.child_by_field_name("name") == ident


def _declared_by(unit: Unit, b: Binding) -> set[str]:
    """The names a run's own statements declare (not those of blocks nested in them)."""
    decls = [n for n in b.nodes if n.type == "declaration"]
    return {d.name for d in declarations_of(unit, decls)} if decls else set()


def _mark(name: str, seqs: frozenset[str]) -> str:
    if name.startswith(RUN_PREFIX):
        return "..."
    return f"$$${name}" if name in seqs else f"${name}"
