"""``rewrite within $$$X { anchor … guard … replace … }``: sub-rewrites.

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

The edit (its compile, plan, inverse, printing) and the sub-matching it needs at a site
(``sub_matches``: the pipeline runs it after the rule's guard holds) are both here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from klc.analysis.types import has_type_kind
from klc.edits.base import (
    InvertContext,
    KindEdit,
    PlanContext,
    compile_code,
    indent_block,
    metavar_names,
    target_of,
    to_holes,
)
from klc.edits.bytes import ByteEdit, apply_edits
from klc.edits.render import render
from klc.edits.replace import Replace, replace_match
from klc.errors import KlcError
from klc.guards import GuardContext, evaluate
from klc.guards.loops import evaluate_declared
from klc.match import Binding, Match, _Matcher, block_statements, pattern_of
from klc.match.dots import rule_scope_refusal
from klc.match.find import binds_qualified_type
from klc.match.iso_checks import split_obligations
from klc.match.model import SubMatches
from klc.rule import Card, CodeBlock, CompileContext, Edit, EditSpec, GuardExpr, Inverse, Rule
from klc.rule.code import code_refs
from klc.rule.fresh import implied_fresh
from klc.rule.guard import guard_text
from klc.rule.printer import block
from klc.rule.registry import EditKind

if TYPE_CHECKING:
    from tree_sitter import Node

    from klc.spec import Bound, Spec


@dataclass(frozen=True)
class Within(KindEdit):
    target: str  # the metavariable whose code the sub-rule rewrites, without "$"
    sub: Rule  # its anchor, guard, one Replace edit, and its inverse guard (an Inverse)

    kind: ClassVar[str] = "within"

    def subrules(self) -> tuple[Rule, ...]:
        return (self.sub,)

    def written_at(self) -> str | None:
        return self.target

    def holes_used(self) -> set[str]:
        return {r.name for r in code_refs(_template(self.sub)) if r.kind == "hole"}

    def prepare(self, px: PlanContext) -> None:
        """Before the other edits plan: the code the target becomes (``px.overrides``, for
        a replace template that writes the target out) and the same rewrites as source
        edits (``px.staged``, applied unless a template writes the target out)."""
        subs = px.match.subs
        if subs is None or self.target in px.overrides or self.target not in subs.matches:
            return
        px.overrides[self.target], edits = _rewritten(px.match, self.target,
                                                      subs.matches[self.target], px.holes)
        px.staged.extend(edits)

    def plan(self, px: PlanContext) -> None:
        return None  # (prepare did it)

    def invert(self, ix: InvertContext) -> Edit | None:
        return _inverse_within(self, ix)

    def lines(self, rule: Rule) -> list[str]:
        sub = self.sub
        mark = "$$$" if self.target in rule.sequence_metavars else "$"
        out = [f"  rewrite within {mark}{self.target} {{"]
        out += [("  " + ln) if ln else "" for ln in block("anchor", sub.anchor)]
        if sub.guard is not None:
            out.append(f"    guard: {guard_text(sub.guard)}")
        out += [("  " + ln) if ln else "" for ln in block("replace", _template(sub))]
        if sub.inverse is not None and sub.inverse.guard is not None:
            out.append(f"    inverse guard: {guard_text(sub.inverse.guard)}")
        out.append("  }")
        return out

    def describe(self) -> list[str]:
        sub = self.sub
        mark = "$$$" if self.target in sub.sequence_metavars else "$"
        out = [f"  inside {mark}{self.target}, each piece of code that matches this (and that no "
               "earlier within block rewrote):\n" + indent_block(sub.anchor, "      ")]
        if sub.guard is not None:
            out.append(f"    where {guard_text(sub.guard)}")
        out.append("    is replaced with:\n" + indent_block(_template(sub), "      "))
        return out


def _template(sub: Rule) -> str:
    edit = sub.edits[0]
    assert isinstance(edit, Replace)
    return edit.template


def _rewritten(match: Match, name: str, sms: list[Match], holes: dict[str, str]
               ) -> tuple[str, list[ByteEdit]]:
    """The text the binding ``name`` becomes, and its sub-rewrites as source edits
    (``what`` holds the target's name)."""
    source = match.unit.source
    b = match.bindings[name]
    edits = []
    for sm in sms:
        e = replace_match(sm, _template(sm.rule), holes)
        start, text = e.start, e.text
        if start < b.start:  # the edit took the line's indentation: the binding did not
            lead = source[start:b.start].decode("utf-8", "replace")
            if text.startswith(lead):
                text = text[len(lead):]
            start = b.start
        edits.append(ByteEdit(start, e.end, text, name))
    rel = [ByteEdit(e.start - b.start, e.end - b.start, e.text, e.what) for e in edits]
    return apply_edits(b.text.encode(), rel).decode("utf-8"), edits


def compile_within(e: EditSpec, cx: CompileContext) -> Edit | None:
    """A ``rewrite within $X { anchor, guard, replace, inverse guard }`` block: a sub-rule
    whose anchor is matched inside the code $X bound. Its metavariables are its own, plus the
    rule's (a name both bind must bind equal code); its replace and guards may use both."""
    target_tok, *items = e.args
    what = f"rewrite within {target_tok}"
    target = target_of(target_tok, cx, what)
    got = _items(items, cx, what)
    for required in ("anchor", "replace"):
        if required not in got:
            cx.errs.add(e.line, e.col, f"{what}: missing `{required}`")
    if "anchor" not in got or "replace" not in got:
        return None
    anchor: CodeBlock = got["anchor"]
    mine: set[str] = set()
    seqs: set[str] = set()
    if not anchor.text.strip():
        cx.errs.add(anchor.line, anchor.col, f"{what}: the anchor is empty")
        return None
    cx.check_anchor(anchor, mine, seqs)
    outer, outer_seqs = cx.metavars, cx.sequences
    for name in sorted(mine & outer):
        if (name in seqs) != (name in outer_seqs):
            cx.errs.add(anchor.line, anchor.col, f"{what}: the anchor binds {name} as "
                        f"{'$$$' if name in seqs else '$'}{name}, the rule's anchor as "
                        f"{'$$$' if name in outer_seqs else '$'}{name}")
    names = mine | outer
    sequences = seqs | (outer_seqs - mine)

    def use(ref_kind: str, name: str, line: int, col: int, where_: str) -> None:
        shown = ("$$$" if ref_kind == "sequence" else "$") + name
        if name == "_":
            cx.errs.add(line, col, f"{shown} in {where_}: the wildcard binds nothing")
        elif name not in names:
            cx.errs.add(line, col, f"{shown} is used in {where_} but neither its anchor nor "
                        "the rule's binds it")
        elif (ref_kind == "sequence") != (name in sequences):
            cx.errs.add(line, col, f"{shown} is used in {where_} but is bound as "
                        f"{'$$$' if name in sequences else '$'}{name}")

    template = compile_code(got["replace"], cx, "rewrite replace", use)
    guards: dict[str, GuardExpr | None] = {}
    for item in ("guard", "inverse_guard"):
        g = guards[item] = got.get(item)
        if g is not None:
            cx.check_guard(g, use, f"the {item.replace('_', ' ')} of {what}",
                           f"the guard of {what}")
    if template is None:
        return None
    inverse_guard = guards["inverse_guard"]
    spec = cx.spec
    sub = Rule(
        name=f"{spec.name}.within{cx.index}", kind="within", description="", path=spec.path,
        line=e.line, col=e.col, anchor=anchor.text,
        anchor_line=anchor.starts[0][0] if anchor.starts else anchor.line,
        anchor_col=anchor.starts[0][1] if anchor.starts else anchor.col,
        context=("any",), guard=guards["guard"],
        edits=(Replace(template, line=e.line, col=e.col),), holes=cx.holes, card=Card(),
        metavars=frozenset(names), sequence_metavars=frozenset(sequences),
        inverse=Inverse(guard=inverse_guard) if inverse_guard is not None else None,
        isos_off=cx.isos_off)
    return Within(target, sub, line=e.line, col=e.col)


def _items(items: list[tuple[str, Any, int, int]], cx: CompileContext, what: str
           ) -> dict[str, Any]:
    """The block's items by name; an item given twice is an error at the second."""
    seen: dict[str, tuple[int, int]] = {}
    got: dict[str, Any] = {}
    for item, value, line, col in items:
        if item in seen:
            cx.errs.add(line, col, f"{what}: duplicate `{item.replace('_', ' ')}` (first at "
                        f"line {seen[item][0]}:{seen[item][1]})")
            continue
        seen[item] = (line, col)
        got[item] = value
    return got


def _inverse_within(e: Within, ix: InvertContext) -> Edit:
    """A ``rewrite within`` block inverted: its replace is the skill block's anchor, its
    anchor the skill block's replace (metavariables neither the skill's anchor nor the
    block's new anchor binds become holes, shared with the rule's), and its ``inverse
    guard`` the skill block's guard."""
    sub, bound = e.sub, ix.bound
    if e.target not in bound:
        raise KlcError(f"{ix.where}: `rewrite within ${e.target}`: the skill's anchor does "
                       f"not bind ${e.target}")
    new_anchor = _template(sub)
    if any(r.kind == "hole" for r in code_refs(new_anchor)):
        raise KlcError(f"{ix.where}: a within block's replace template holds a hole, which "
                       "an anchor cannot")
    mine = frozenset(metavar_names(new_anchor))
    names: dict[str, str] = {}
    for m in sorted(metavar_names(sub.anchor) - mine - bound):
        names[m] = ix.erased_hole(m)
    guard = sub.inverse.guard if sub.inverse is not None else None
    seqs = frozenset(r.name for r in code_refs(new_anchor) if r.kind == "sequence")
    inverted = replace(
        sub, anchor=new_anchor, guard=guard, inverse=None, anchor_line=0, anchor_col=0,
        edits=(Replace(to_holes(sub.anchor, names)),),
        metavars=mine | bound, sequence_metavars=seqs | (sub.sequence_metavars & bound))
    return Within(e.target, inverted)


@dataclass
class SubResult:
    """The sub-matches of one site (by target metavariable), or why there are none."""

    matches: dict[str, list[Match]]
    refused: list[tuple[Match, str]]

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.matches.values())


def within_edits(rule: Rule) -> list[Within]:
    return [e for e in rule.edits if isinstance(e, Within)]


def _candidates(outer: Match, sub: Rule, start: int, end: int) -> list[tuple[Node, list[Node]]]:
    """(node, children) pairs to try inside [start, end): for a single-node anchor, nodes of
    its root type inside the span; for a run of statements, blocks overlapping the span with
    their children that lie inside it (the binding's own statements are children of a block
    that starts before the span)."""
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
                                   run[-1].end_byte, run, b,
                                   obligations=split_obligations(b)))
        else:
            b = dict(outer.bindings)
            if m.node(pattern.elements[0], node, b):
                found.append(Match(sub, unit, outer.function, node.start_byte, node.end_byte,
                                   (node,), b, obligations=split_obligations(b)))
    found.sort(key=lambda x: (x.start, -x.end))
    return found


def sub_matches(outer: Match, holes: dict[str, str], spec: Spec | Bound | None = None,
                clang: bool = True) -> SubResult:
    """The sub-matches of every ``within`` edit of the outer match's rule whose guards hold
    (outermost first across the edits, the first sub-rule winning at one place, no
    overlaps), and the refused ones with why. Outermost first across the edits: a loop that
    a later sub-rule takes is not left to a loop nested in it that an earlier one takes
    (guards such as lane_owned_updates reason about the outermost loop)."""
    result = SubResult({}, [])
    taken: list[tuple[int, int]] = []
    candidates: list[tuple[int, int, int, Match, Within, tuple[str, ...]]] = []
    for rank, edit in enumerate(within_edits(outer.rule)):
        binding = outer.bindings.get(edit.target)
        if binding is None or binding.start == binding.end:
            continue
        fresh = implied_fresh(edit.sub, outer.rule)  # ident holes its replace declares
        for sm in _matches_in(outer, edit.sub, binding):
            if not binds_qualified_type(sm):
                candidates.append((sm.start, sm.start - sm.end, rank, sm, edit, fresh))
    candidates.sort(key=lambda c: c[:3])
    for _start, _span, _rank, sm, edit, fresh in candidates:
        if any(sm.start < e and s < sm.end for s, e in taken):
            continue
        if sm.obligations and not all(has_type_kind(
                GuardContext(sm, holes, spec, clang, render=render),  # type: ignore[arg-type]
                o, o.name) for o in sm.obligations):
            continue  # an isomorphism's spelling whose type does not hold: no match
        if edit.sub.guard is not None or fresh:
            ctx = GuardContext(sm, holes, spec, clang, render=render)  # type: ignore[arg-type]
            verdict = evaluate(edit.sub.guard, ctx) if edit.sub.guard is not None \
                else None
            if verdict is None or verdict.ok:
                verdict = evaluate_declared(fresh, ctx)
            if verdict is not None and not verdict.ok:
                result.refused.append((sm, verdict.reason))
                continue
        why = rule_scope_refusal(edit.sub, sm)  # a name a run of the sub-anchor declares
        if why is not None:
            result.refused.append((sm, why))
            continue
        taken.append((sm.start, sm.end))
        result.matches.setdefault(edit.target, []).append(sm)
    for v in result.matches.values():
        v.sort(key=lambda x: x.start)
    return result


def why_none(outer: Match, result: SubMatches) -> str:
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


# the kinds this file defines (``klc.plugins`` hands them to the rule loader)
KINDS = (
    EditKind("within", compile_within, Within),
)
