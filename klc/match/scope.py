"""Where a rule may apply, as candidates: the nodes of a unit that lie in the functions a rule's
context clause admits (``klc.pipeline.find_sites`` without the refused sites matches a rule
only there; ``klc.pipeline.check_context`` still judges every match)."""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any, NamedTuple

from tree_sitter import Node

if TYPE_CHECKING:
    from klc.cuda.model import Function, Unit
    from klc.match.pattern import Pattern


class Scope(NamedTuple):
    """Where a rule's context clause lets it apply, as ``check_context`` judges it: in a
    ``__global__`` function, a ``__device__`` one, device code (a rewrite that writes
    device-only names), at a kernel body's top level."""

    kernel: bool
    device: bool
    device_code: bool
    body: bool

    def admits(self, fn: Function | None) -> bool:
        if fn is None:
            return False
        if self.kernel and not fn.is_kernel:
            return False
        if self.device and not fn.is_device:
            return False
        return not self.device_code or fn.kind in ("global", "device")


def scoped(unit: Unit, pattern: Pattern, candidates: dict[str, list[Node]], scope: Scope,
           memo: dict[tuple[object, ...], Any] | None = None) -> dict[str, list[Node]]:
    """The candidates of a pattern (and of its ``anchor any`` branches) that overlap a
    function the context ``scope`` admits (a match's function holds its first node) and, at
    kernel scope, that are such a function's body (where a run of statements is looked for)
    or a statement of one (a node matched alone): a superset of the candidates whose matches
    ``check_context`` lets through, found by bisection over the functions' spans. ``memo``:
    the lists already made for this unit and these candidates, by scope, type and role
    (the patterns of many rules share them)."""
    patterns = (pattern, *pattern.alternatives)
    types = {p.root_type for p in patterns}
    spans = memo.get(("spans", scope)) if memo is not None else None
    if spans is None:
        spans = _spans(unit, scope)
        if memo is not None:
            memo[("spans", scope)] = spans
    starts, ends, bodies, body_kids = spans
    if not starts:
        return {t: [] for t in types}
    runs = {p.root_type for p in patterns if p.is_sequence}
    alone = {p.root_type for p in patterns if not p.is_sequence}
    bisect_left = bisect.bisect_left
    out: dict[str, list[Node]] = {}
    for t in types:
        key = (scope, t, (t in runs, t in alone) if scope.body else None)
        if memo is not None and key in memo:
            out[t] = memo[key]
            continue
        nodes = candidates[t] if t in candidates else unit.nodes_by_type((t,))[t]
        if not scope.body:
            keep = _overlapping(nodes, starts, ends, memo)
        else:
            keep = []
            for n in nodes:
                s, e = n.start_byte, n.end_byte
                i = bisect_left(starts, e) - 1
                if i < 0 or ends[i] <= s:
                    continue  # in no function the rule may apply in
                if not ((t in runs and s in bodies) or (t in alone and (
                        n.id in body_kids if s < e else  # (a node of no width: asked)
                        n.parent is not None and n.parent.start_byte in bodies))):
                    continue  # not a kernel body, nor a statement of one
                keep.append(n)
        out[t] = keep
        if memo is not None:
            memo[key] = keep
    return out


def function_spans(unit: Unit, scope: Scope, memo: dict[tuple[object, ...], Any] | None = None
                   ) -> tuple[list[int], list[int]]:
    """The spans of the functions ``scope`` admits, merged where they nest or overlap, in
    order: their starts and ends (``memo``: shared with ``scoped``)."""
    spans = memo.get(("spans", scope)) if memo is not None else None
    if spans is None:
        spans = _spans(unit, scope)
        if memo is not None:
            memo[("spans", scope)] = spans
    return spans[0], spans[1]


class Where:
    """Where the candidates of a pattern's branch lie, for ``first_per_name``, which meets
    them on the way down to a name and never needs them listed: nodes of the branch's type
    that overlap one of the spans [starts[i], ends[i]) (sorted, apart: the functions a
    rule's context admits, as ``klc.match.scope`` takes them), every node of the type where
    there are no spans (``spans`` None), or those of a list (``ids``: a scope that keeps
    only some nodes of its functions, ``scope.body``)."""

    __slots__ = ("ends", "firsts", "ids", "starts")

    def __init__(self, spans: tuple[list[int], list[int]] | None = None,
                 nodes: list[Node] | None = None) -> None:
        self.starts, self.ends = spans if spans is not None else (None, None)
        self.ids = {n.id for n in nodes} if nodes is not None else None
        self.firsts = [n.start_byte for n in nodes] if nodes is not None else None

    def within(self, start: int, end: int) -> bool:
        """Whether a candidate may start in [start, end) (a function's span)."""
        if self.firsts is not None:
            firsts = self.firsts
            return bisect.bisect_left(firsts, start) < bisect.bisect_left(firsts, end)
        return self.starts is None or self._overlaps(start, end)

    def holds(self, node: Node) -> bool:
        """Whether a node of the branch's type is one of its candidates."""
        if self.ids is not None:
            return node.id in self.ids
        return self.starts is None or self._overlaps(node.start_byte, node.end_byte)

    def _overlaps(self, s: int, e: int) -> bool:
        # the first span that ends after s; [s, e) reaches into it when it ends after the
        # span starts (a node of no width inside a span is in it; at its start, not)
        j = bisect.bisect_right(self.ends, s)  # type: ignore[arg-type]
        return j < len(self.ends) and e > self.starts[j]  # type: ignore[arg-type,index]


def where_of(unit: Unit, branch: Pattern, scope: Scope | None,
             candidates: dict[str, list[Node]], memo: dict[tuple[object, ...], Any]) -> Where:
    """Where a branch's candidates lie for ``klc.match.find.first_per_name``: every node of
    its type (no scope), those in the functions ``scope`` admits, or, at a kernel body's top
    level, those ``scoped`` keeps (``candidates``: the unit's index). One object for the
    same candidates (kept in ``memo``): the anchors that share a branch share its answers."""
    if scope is None:
        return Where()
    if not scope.body:
        key: tuple[object, ...] = ("where", scope)
        held = memo.get(key)
        if held is None:
            held = memo[key] = Where(function_spans(unit, scope, memo))
        return held  # type: ignore[no-any-return]
    nodes = scoped(unit, branch, candidates, scope, memo)[branch.root_type]
    key = ("where", id(nodes))  # (one per list: the branches of its kind share it)
    held = memo.get(key)
    if held is None or held[0] is not nodes:
        held = memo[key] = (nodes, Where(nodes=nodes))
    return held[1]  # type: ignore[no-any-return]


def _spans(unit: Unit, scope: Scope) -> tuple[list[int], list[int], set[int], set[int]]:
    """The spans of the functions ``scope`` admits (merged where they nest or overlap, in
    order: their starts and ends), the starts of their bodies, and (by ``Node.id``) the
    children of the nodes that start there (``_children_at``)."""
    fns = [f for f in unit.functions if scope.admits(f)]
    starts: list[int] = []
    ends: list[int] = []
    for f in sorted(fns, key=lambda f: f.start):
        if ends and f.start < ends[-1]:
            ends[-1] = max(ends[-1], f.end)
        else:
            starts.append(f.start)
            ends.append(f.end)
    bodies = {f.body_start for f in fns}
    return starts, ends, bodies, _children_at(unit, bodies)


def _children_at(unit: Unit, offsets: set[int]) -> set[int]:
    """The ids of the children of every node that starts at one of the offsets and has a
    width: a node of width whose parent starts at such an offset is one of them (a node
    holding the offset's byte is the smallest such node or one of its ancestors), found
    without asking each candidate for its parent (which tree-sitter finds from the root)."""
    root = unit.root
    out: set[int] = set()
    for at in offsets:
        node = root.descendant_for_byte_range(at, at + 1)
        while node is not None and node.start_byte == at:
            out.update(c.id for c in node.children)
            node = node.parent
    return out


def _overlapping(nodes: list[Node], starts: list[int], ends: list[int],
                 memo: dict[tuple[object, ...], Any] | None) -> list[Node]:
    """The nodes (in source order) that overlap one of the spans [starts[i], ends[i])
    (sorted, apart): those that start inside a span are taken a slice at a time, by
    bisection over the nodes' starts (kept in ``memo`` beside the list they belong to); of
    the others (between spans), those that reach into the next span."""
    held = memo.get(("starts", id(nodes))) if memo is not None else None
    if held is None or held[0] is not nodes:
        held = (nodes, [n.start_byte for n in nodes])
        if memo is not None:
            memo[("starts", id(nodes))] = held
    node_starts = held[1]
    bisect_left = bisect.bisect_left
    keep: list[Node] = []
    at = 0  # the first node not looked at yet
    for lo, hi in zip(starts, ends, strict=True):
        first = bisect_left(node_starts, lo, at)
        for n in nodes[at:first]:  # (start before the span: kept if they reach into it)
            if n.end_byte > lo:
                keep.append(n)
        at = bisect_left(node_starts, hi, first)
        while first < at and node_starts[first] == lo:  # (an empty node at the start: not in)
            if nodes[first].end_byte > lo:
                keep.append(nodes[first])
            first += 1
        keep += nodes[first:at]
    return keep
