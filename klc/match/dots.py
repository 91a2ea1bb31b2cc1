"""Statement dots judged on a whole match (``klc.rule.dots`` reads them): what the statements a
``...`` skipped may do. A match whose skipped statements break a clause is no match.

Default (no ``when any``): the skipped statements neither assign, increment, declare nor store
through any identifier of what the anchor's one-node metavariables bound (``$R`` bound to
``row``: no ``row = ...``, no ``int row``, no ``row[i] = ...``; a local pointer made from it
counts as it, ``klc.analysis.writes._aliases``). ``when not writes(A)`` adds A (a metavariable:
the identifiers it bound; a plain name: itself) to that list; ``when not mentions(A)``: no
token of the skipped code is A; ``when not stores``: nothing in it may write memory at all."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from klc.analysis.declarations import declared_names_in
from klc.analysis.tree import leaves_in, names_in
from klc.analysis.writes import aliases_of, is_assigned, writes_around, writes_to
from klc.rule.dots import RUN_PREFIX, Dots

if TYPE_CHECKING:
    from klc.cuda.model import Function, Unit
    from klc.match.model import Binding, Match
    from klc.match.pattern import Pattern

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
        why = _refusal(at, d, run.start, run.end, default | _resolve(d.writes, match), match)
        if why is not None:
            return why
    return None


def _refusal(at: _At, d: Dots, start: int, end: int, names: frozenset[str],
             match: Match) -> str | None:
    unit = at.unit
    where = unit.where(start)
    redeclared = declared_names_in(unit, start, end) & names
    if redeclared:
        return f"the statements `...` skipped at {where} declare {sorted(redeclared)[0]}"
    for name in sorted(names):
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
