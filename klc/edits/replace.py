"""``rewrite replace: ```code````: the anchor's code becomes the template, filled. A rule holds
one; a simplification's replace is its inverse skill's anchor (and the other way round)."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from klc.cuda.syntax import parser
from klc.edits.base import InvertContext, KindEdit, PlanContext, compile_code, indent_block
from klc.edits.bytes import ByteEdit, minimal_edit
from klc.edits.render import SUBST_RE, in_context, line_indent, render
from klc.rule import CompileContext, Edit, EditSpec, Rule
from klc.rule.dots import as_runs
from klc.rule.printer import block
from klc.rule.registry import EditKind

if TYPE_CHECKING:
    from klc.match import Match


@dataclass(frozen=True)
class Replace(KindEdit):
    template: str

    kind: ClassVar[str] = "replace"
    groupable: ClassVar[bool] = True
    leads: ClassVar[bool] = True
    in_place: ClassVar[bool] = True

    def templates(self) -> tuple[str, ...]:
        return (self.template,)

    def plan(self, px: PlanContext) -> None:
        edit = replace_match(px.match, self.template, px.holes, px.overrides)
        px.add(dataclasses.replace(edit, claims_match=True))
        # a binding this template writes out carries its within rewrites: no source edit
        used = {r.group(1) or r.group(2) for r in SUBST_RE.finditer(self.template)}
        px.staged[:] = [e for e in px.staged if e.what not in used]

    def invert(self, ix: InvertContext) -> Edit | None:
        """The skill's replace is the pass's anchor (the pass's replace is its anchor); an
        ``anchor any`` has no one text to write back: no inverse."""
        if ix.rule.anchors:
            return None
        return Replace(ix.skill_text(ix.rule.anchor))

    def lines(self, rule: Rule) -> list[str]:
        return block(f"rewrite {self.kind}", self.template)

    def describe(self) -> list[str]:
        return ["  replace the matched code with:\n" + indent_block(self.template)]


def compile_replace(e: EditSpec, cx: CompileContext) -> Replace | None:
    text = compile_code(e.args[0], cx, f"rewrite {e.kind}")
    return None if text is None else Replace(text, line=e.line, col=e.col)


def replace_match(match: Match, template: str, holes: dict[str, str],
                  overrides: dict[str, str] | None = None) -> ByteEdit:
    """Replace the anchor. When the match starts its line, the edit starts at the line start
    and every template line gets the indentation of the first matched statement that is
    not a preprocessor line (a "#pragma" is often written in column 1). A template's
    ``...`` lines write back what the anchor's dots of the same rank skipped (byte for
    byte, moved with their lines like any run: ``klc.rule.dots``)."""
    template = as_runs(template)
    unit = match.unit
    line_start = unit.source.rfind(b"\n", 0, match.start) + 1
    if unit.source[line_start:match.start].strip():
        indent = line_indent(unit.source, match.start)
        text = in_context(render(template, match, holes, indent, overrides), match.nodes)
        text = _braced(match, _keep_attributes(match, text), indent)
        return minimal_edit(unit.source, ByteEdit(match.start, match.end, text, "replace"))
    code = next((n for n in match.nodes if not n.type.startswith("preproc")), match.nodes[0])
    indent = line_indent(unit.source, code.start_byte)
    text = _braced(match, _keep_attributes(match, render(template, match, holes, indent,
                                                         overrides)), indent)
    return minimal_edit(unit.source, ByteEdit(line_start, match.end, indent + text,
                                              "replace"))


# statements whose body may be one statement without braces
BRACELESS_BODY = frozenset({"for_statement", "for_range_loop", "while_statement",
                             "do_statement", "if_statement", "else_clause"})


def _braced(match: Match, text: str, indent: str) -> str:
    """The replacement in braces where the matched statement is the unbraced body of a
    loop or a branch (`for (...)` then one statement on the next line) and the
    replacement holds more than one statement: unbraced, only its first statement would
    stay in the loop, and the rest would run once after it."""
    if len(match.nodes) != 1:
        return text
    node = match.nodes[0]
    if node.parent is None or node.parent.type not in BRACELESS_BODY or not (
            node.type.endswith("statement") or node.type == "declaration") or \
            _statement_count(text) <= 1:
        return text
    first, *rest = text.split("\n")
    inner = [indent + "    " + first] + ["    " + ln if ln.strip() else ln for ln in rest]
    return "{\n" + "\n".join(inner) + "\n" + indent + "}"


def _statement_count(text: str) -> int:
    """How many statements (declarations included) the text holds at its top level, read
    as a function body; 1 when it does not parse as one (the reparse check judges it)."""
    src = ("void __klc_body__() {\n" + text + "\n}\n").encode()
    root = parser().parse(src).root_node
    if root.has_error or not root.named_children:
        return 1
    body = root.named_children[0].child_by_field_name("body")
    if body is None:
        return 1
    return sum(1 for c in body.named_children if c.type != "comment")


_KEPT_MASKS = frozenset({"attribute", "specifier macro"})
_LAST_TOKEN = re.compile(r"([A-Za-z_]\w*)\s*$")


def _keep_attributes(match: Match, text: str) -> str:
    """The rendered replacement with the attributes and specifier macros of the matched
    code that no metavariable carried (``__align__(16)`` in ``__shared__ __align__(16) float
    t[32][32];``, which the parser saw as blanks, so no pattern names it): each goes back
    after the word it followed, where the replacement has that word, else in front."""
    unit = match.unit
    bound = [(b.start, b.end) for b in match.bindings.values()]
    for mask in reversed(unit.masks):  # (from the last: earlier insertions keep places)
        if mask.reason not in _KEPT_MASKS or not (match.start <= mask.start < match.end) \
                or any(s <= mask.start < e for s, e in bound):
            continue
        kept = unit.text(mask.start, mask.end).strip()
        if not kept or kept in text:
            continue
        before = _LAST_TOKEN.search(unit.text(match.start, mask.start))
        at = -1
        if before is not None:
            found = re.search(r"(?<![\w])" + re.escape(before.group(1)) + r"(?![\w])", text)
            at = found.end() if found is not None else -1
        text = f"{text[:at]} {kept}{text[at:]}" if at >= 0 else f"{kept} {text}"
    return text


# the kinds this file defines (``klc.plugins`` hands them to the rule loader)
KINDS = (
    EditKind("replace", compile_replace, Replace,
             once_per_rule="only one `rewrite replace` per rule (the anchor is replaced once)"),
)
