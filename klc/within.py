"""Sub-rewrites: ``rewrite within $$$X { anchor … guard … replace … }``.

A rule may rewrite pieces of the code one of its metavariables bound, the way ast-grep's
rewriters or Coccinelle's nested ``<... ...>`` do: a kernel body whose loops each need their
own change (strided by lane, followed by a warp reduction of what they accumulate) is one
rule with a few sub-rules, not one rule per body shape.

Semantics (the README's rule-language section says the same):

- a sub-rule's anchor is matched against the code inside the binding, never outside it;
  the rule's bindings are in force: a metavariable both anchors name must bind equal code,
  and the sub-rule's guard and replace may use the rule's metavariables and holes;
- the sub-rules of a rule are tried in the order written; a piece of code is rewritten by the
  first sub-rule that matches it and whose guard holds; matches are taken outermost first and
  never overlap (code inside a rewritten piece is not rewritten again);
- a site whose sub-rules match nothing is refused ("why not" names the sub-rules and the
  first guard that failed): the rule means "rewrite these pieces", and there are none;
- the rewritten text replaces the binding wherever the rule's ``replace`` template uses it;
  a rule without such a template edits the binding's code in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from klc.match import Binding, Match, _Matcher, block_statements

if TYPE_CHECKING:
    from tree_sitter import Node

    from klc.rules import Edit, Rule


@dataclass
class SubResult:
    """The sub-matches of one site (by target metavariable), or why there are none."""

    matches: dict[str, list[Match]]
    refused: list[tuple[Match, str]]

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.matches.values())


def within_edits(rule: Rule) -> list[Edit]:
    return [e for e in rule.edits if e.kind == "within" and e.sub is not None]


def _candidates(outer: Match, sub: Rule, start: int, end: int) -> list[tuple[Node, list[Node]]]:
    """(node, children) pairs to try inside [start, end): for a single-node anchor, nodes of
    its root type inside the span; for a run of statements, blocks overlapping the span with
    their children that lie inside it (the binding's own statements are children of a block
    that starts before the span)."""
    from klc.pipeline import pattern_of

    pattern = pattern_of(sub)
    unit = outer.unit
    nodes = unit.nodes_by_type([pattern.root_type]).get(pattern.root_type, [])
    out: list[tuple[Node, list[Node]]] = []
    for node in nodes:
        if pattern.is_sequence:
            if node.end_byte <= start or node.start_byte >= end:
                continue
            kids = [k for k in block_statements(node)
                    if start <= k.start_byte and k.end_byte <= end]
            if kids:
                out.append((node, kids))
        elif start <= node.start_byte and node.end_byte <= end:
            out.append((node, []))
    return out


def _matches_in(outer: Match, sub: Rule, binding: Binding) -> list[Match]:
    """Every match of the sub-rule's anchor inside the binding, the rule's bindings in
    force, in source order."""
    from klc.pipeline import pattern_of

    pattern = pattern_of(sub)
    unit = outer.unit
    src = unit.source
    if any(src.find(w, binding.start, binding.end) < 0 for w in pattern.words):
        return []
    m = _Matcher(src)
    found: list[Match] = []
    for node, kids in _candidates(outer, sub, binding.start, binding.end):
        if pattern.is_sequence:
            for j in range(len(kids)):
                b = dict(outer.bindings)
                end = m.seq(pattern.elements, 0, kids, j, b, anchored=False)
                if end is None or end == j:
                    continue
                run = tuple(kids[j:end])
                found.append(Match(sub, unit, outer.function, run[0].start_byte,
                                   run[-1].end_byte, run, b))
        else:
            b = dict(outer.bindings)
            if m.node(pattern.elements[0], node, b):
                found.append(Match(sub, unit, outer.function, node.start_byte, node.end_byte,
                                   (node,), b))
    found.sort(key=lambda x: (x.start, -x.end))
    return found


def sub_matches(outer: Match, holes: dict[str, str], spec: object | None = None,
                clang: bool = True) -> SubResult:
    """The sub-matches of every ``within`` edit of the outer match's rule whose guards hold
    (first sub-rule wins, outermost first, no overlaps), and the refused ones with why."""
    from klc.guards import GuardContext, evaluate

    result = SubResult({}, [])
    taken: list[tuple[int, int]] = []
    for edit in within_edits(outer.rule):
        assert edit.sub is not None and edit.target is not None
        binding = outer.bindings.get(edit.target)
        if binding is None or binding.start == binding.end:
            continue
        for sm in _matches_in(outer, edit.sub, binding):
            if any(sm.start < e and s < sm.end for s, e in taken):
                continue
            if edit.sub.guard is not None:
                verdict = evaluate(edit.sub.guard, GuardContext(sm, holes, spec, clang))
                if not verdict.ok:
                    result.refused.append((sm, verdict.reason))
                    continue
            taken.append((sm.start, sm.end))
            result.matches.setdefault(edit.target, []).append(sm)
    for v in result.matches.values():
        v.sort(key=lambda x: x.start)
    return result


def why_none(outer: Match, result: SubResult) -> str:
    """The reason a site whose sub-rules matched nothing is refused."""
    targets = sorted({"$$$" + e.target if e.target in outer.rule.sequence_metavars
                      else "$" + str(e.target) for e in within_edits(outer.rule)})
    n = len(within_edits(outer.rule))
    text = (f"rewrite within {', '.join(targets)}: none of its {n} sub-rule"
            f"{'s' if n != 1 else ''} matches inside it")
    if result.refused:
        sm, reason = result.refused[0]
        text += f" (at {outer.unit.where(sm.start)}: {reason})"
    return text
