"""``rewrite insert_body_start: ```code```` and ``rewrite remove_statement: ```code````: a
statement put at the start of the enclosing function's body, or the first line of the body
that holds exactly that statement taken out. Each is the other's inverse."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from klc.edits.base import (
    InvertContext,
    KindEdit,
    PlanContext,
    compile_code,
    enclosing_function,
    indent_block,
)
from klc.edits.bytes import ByteEdit
from klc.edits.render import render
from klc.edits.replace import BRACELESS_BODY
from klc.rule import CompileContext, Edit, EditSpec, Rule
from klc.rule.printer import block
from klc.rule.registry import EditKind

if TYPE_CHECKING:
    from klc.cuda.model import Function, Unit


@dataclass(frozen=True)
class InsertBodyStart(KindEdit):
    template: str

    kind: ClassVar[str] = "insert_body_start"

    def templates(self) -> tuple[str, ...]:
        return (self.template,)

    def plan(self, px: PlanContext) -> None:
        fn = enclosing_function(px.match, self)
        px.add(_insert_body_start(px.match.unit, fn, render(self.template, px.match,
                                                             px.holes)))

    def invert(self, ix: InvertContext) -> Edit | None:
        return RemoveStatement(ix.skill_text(self.template))

    def lines(self, rule: Rule) -> list[str]:
        return block(f"rewrite {self.kind}", self.template)

    def describe(self) -> list[str]:
        return ["  insert at the start of the function body:\n" + indent_block(self.template)]


@dataclass(frozen=True)
class RemoveStatement(KindEdit):
    template: str

    kind: ClassVar[str] = "remove_statement"
    groupable: ClassVar[bool] = True
    writes_code: ClassVar[bool] = False  # its template is the statement it deletes

    def templates(self) -> tuple[str, ...]:
        return (self.template,)

    def plan(self, px: PlanContext) -> None:
        fn = enclosing_function(px.match, self)
        px.add(_remove_statement(px.match.unit, fn, render(self.template, px.match,
                                                            px.holes)))

    def invert(self, ix: InvertContext) -> Edit | None:
        return InsertBodyStart(ix.skill_text(self.template))

    def lines(self, rule: Rule) -> list[str]:
        return block(f"rewrite {self.kind}", self.template)

    def describe(self) -> list[str]:
        return ["  remove this statement from the function body:\n"
                + indent_block(self.template)]


def compile_insert(e: EditSpec, cx: CompileContext) -> Edit | None:
    text = compile_code(e.args[0], cx, f"rewrite {e.kind}")
    return None if text is None else InsertBodyStart(text, line=e.line, col=e.col)


def compile_remove(e: EditSpec, cx: CompileContext) -> Edit | None:
    text = compile_code(e.args[0], cx, f"rewrite {e.kind}")
    return None if text is None else RemoveStatement(text, line=e.line, col=e.col)


def _insert_body_start(unit: Unit, fn: Function, text: str) -> ByteEdit:
    body = unit.source[fn.body_start:fn.body_end]
    # indentation of the first statement of the body, else four spaces past the function's
    nl = body.find(b"\n")
    indent = "    "
    if nl >= 0:
        rest = body[nl + 1:]
        stripped = rest.lstrip(b" \t")
        if stripped and not stripped.startswith(b"}"):
            indent = rest[: len(rest) - len(stripped)].decode()
    lines = text.split("\n")
    block = "\n".join(indent + line if line.strip() else line for line in lines)
    return ByteEdit(fn.body_start + 1, fn.body_start + 1, "\n" + block, "insert_body_start")


def _remove_statement(unit: Unit, fn: Function, text: str) -> ByteEdit | None:
    """Delete the first line of the function's body that holds exactly this statement
    (spacing aside), with the line break before it: the inverse of ``insert_body_start``.
    Nothing to delete (the statement is written otherwise, or gone) is no edit."""
    want = " ".join(text.split())
    pos = unit.source.find(b"\n", fn.body_start, fn.body_end)
    while 0 <= pos < fn.body_end:
        end = unit.source.find(b"\n", pos + 1, fn.body_end)
        end = fn.body_end if end < 0 else end
        line = unit.source[pos + 1:end].decode("utf-8", "replace")
        if " ".join(line.split()) == want and not _unbraced_body(unit, pos + 1 + len(
                line) - len(line.lstrip())):
            return ByteEdit(pos, end, "", "remove_statement")
        pos = end if end < fn.body_end else -1
    return None


def _unbraced_body(unit: Unit, at: int) -> bool:
    """The statement that starts at byte ``at`` is the unbraced body of a loop or a branch:
    deleting it would make the next statement that body."""
    node = unit.tree.root_node.descendant_for_byte_range(at, at)
    while node is not None and node.parent is not None and node.parent.start_byte == at:
        node = node.parent
    while node is not None and node.parent is not None and not (
            node.type.endswith("statement") or node.type == "declaration"):
        node = node.parent
    return node is not None and node.parent is not None and \
        node.parent.type in BRACELESS_BODY


# the kinds this file defines (``klc.plugins`` hands them to the rule loader)
KINDS = (
    EditKind("insert_body_start", compile_insert, InsertBodyStart),
    EditKind("remove_statement", compile_remove, RemoveStatement),
)
