"""``rewrite add_attribute: "__launch_bounds__(?threads)"`` and ``rewrite remove_attribute:
"__launch_bounds__"``: a function attribute of the enclosing function written (or replaced,
when the function has one of that name) or taken out. Each is the other's inverse."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from klc.cuda.syntax import F_DECLARATOR, balanced_end
from klc.edits.base import InvertContext, KindEdit, PlanContext, enclosing_function
from klc.edits.bytes import ByteEdit
from klc.edits.render import fill_holes
from klc.errors import KlcError
from klc.rule import CompileContext, Edit, EditSpec, Rule, parse_problem
from klc.rule.code import IDENT_RE, code_refs, for_parsing
from klc.rule.printer import string
from klc.rule.registry import EditKind

if TYPE_CHECKING:
    from klc.cuda.model import Function, Unit
    from klc.match import Match


@dataclass(frozen=True)
class _Attribute(KindEdit):
    value: str  # the attribute (add) or its name (remove)

    _verb: ClassVar[str] = ""

    def holes_used(self) -> set[str]:
        return {r.name for r in code_refs(self.value) if r.kind == "hole"}

    def lines(self, rule: Rule) -> list[str]:
        return [f"  rewrite {self.kind}: {string(self.value)}"]

    def describe(self) -> list[str]:
        return [f"  {self._verb} the function attribute {self.value}"]


@dataclass(frozen=True)
class AddAttribute(_Attribute):
    kind: ClassVar[str] = "add_attribute"
    _verb: ClassVar[str] = "add"

    def plan(self, px: PlanContext) -> None:
        px.add(_add_attribute(px.match, self, px.holes))

    def invert(self, ix: InvertContext) -> Edit | None:
        return RemoveAttribute(self.value.split("(")[0].strip())


@dataclass(frozen=True)
class RemoveAttribute(_Attribute):
    kind: ClassVar[str] = "remove_attribute"
    _verb: ClassVar[str] = "remove"

    def plan(self, px: PlanContext) -> None:
        px.add(_remove_attribute(px.match, self, px.holes))

    def invert(self, ix: InvertContext) -> Edit | None:
        return AddAttribute(ix.skill_text(ix.attr_text))

    def strip_from_anchor(self, anchor: str) -> tuple[str, str] | None:
        return _strip_attribute(anchor, self.value)


def compile_remove(e: EditSpec, cx: CompileContext) -> Edit | None:
    what = f"rewrite {e.kind}"
    text = e.args[0]
    value = text.value
    cx.use_refs(value, text.position, what)
    if not IDENT_RE.fullmatch(value):
        cx.errs.add(text.line, text.col, f"{what}: give the attribute's name, "
                    f"such as \"__launch_bounds__\", not {json.dumps(value)}")
    return RemoveAttribute(value, line=e.line, col=e.col)


def compile_add(e: EditSpec, cx: CompileContext) -> Edit | None:
    what = f"rewrite {e.kind}"
    text = e.args[0]
    value = text.value
    cx.use_refs(value, text.position, what)
    if not value.strip():
        cx.errs.add(text.line, text.col, f"{what}: the attribute is empty")
    else:
        wrapped = parse_problem(for_parsing(value), (("__global__ void ", " __k() {}\n"),))
        if wrapped is not None:
            line, col = text.position(wrapped[0])
            cx.errs.add(line, col, f"{what}: {json.dumps(value)} is not a function "
                        f"attribute: it {wrapped[1]}")
    return AddAttribute(value, line=e.line, col=e.col)


def _existing(unit: Unit, fn: Function, attr_name: str) -> tuple[int, int] | None:
    """Where the function has the attribute of that name, if it has it."""
    if attr_name == "__launch_bounds__" and fn.launch_bounds is not None:
        return fn.launch_bounds.start, fn.launch_bounds.end
    header = unit.source[fn.start:fn.body_start]
    i = header.find(attr_name.encode())
    if i < 0:
        return None
    end = fn.start + i + len(attr_name.encode())
    if unit.source[end:end + 1] == b"(":
        end = min(balanced_end(unit.source, end) or fn.body_start, fn.body_start)
    return fn.start + i, end


def _remove_attribute(match: Match, edit: _Attribute, holes: dict[str, str]
                      ) -> ByteEdit | None:
    unit, fn = match.unit, enclosing_function(match, edit)
    value = fill_holes(edit.value, holes)
    existing = _existing(unit, fn, value.split("(")[0].strip())
    if existing is None:
        return None
    start, end = existing
    while end < fn.body_start and unit.source[end:end + 1] in (b" ", b"\t"):
        end += 1
    return ByteEdit(start, end, "", edit.kind)


def _add_attribute(match: Match, edit: _Attribute, holes: dict[str, str]) -> ByteEdit | None:
    unit, fn = match.unit, enclosing_function(match, edit)
    value = fill_holes(edit.value, holes)
    existing = _existing(unit, fn, value.split("(")[0].strip())
    if existing is not None:
        if unit.text(*existing) == value:
            return None
        return ByteEdit(existing[0], existing[1], value, edit.kind)
    declarator = fn.node.child_by_field_id(F_DECLARATOR)
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_id(F_DECLARATOR)
    if declarator is None:
        raise KlcError(f"{unit.where(fn.start)}: cannot find the declarator of {fn.name}")
    at = declarator.start_byte
    if unit.source[at - 2:at] == b" \n":  # `void \nname(`: where remove_attribute left
        return ByteEdit(at - 1, at - 1, value, edit.kind)  # `void __launch_bounds__(N)\n`
    return ByteEdit(at, at, value + " ", edit.kind)


def _strip_attribute(anchor: str, name: str) -> tuple[str, str]:
    """(the anchor without ``name(...)``, the attribute text as written) or raise."""
    i = anchor.find(name)
    if i < 0:
        raise KlcError(f"the anchor does not spell the attribute {name} it removes")
    j = i + len(name)
    if anchor[j:j + 1] == "(":
        depth = 0
        for k in range(j, len(anchor)):
            depth += {"(": 1, ")": -1}.get(anchor[k], 0)
            if depth == 0:
                j = k + 1
                break
    end = j
    while end < len(anchor) and anchor[end] in " \t":
        end += 1
    return anchor[:i] + anchor[end:], anchor[i:j]


# the kinds this file defines (``klc.plugins`` hands them to the rule loader)
KINDS = (
    EditKind("add_attribute", compile_add, AddAttribute),
    EditKind("remove_attribute", compile_remove, RemoveAttribute),
)
