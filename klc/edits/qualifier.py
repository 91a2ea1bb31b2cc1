"""``rewrite add_qualifier $X: "__restrict__"`` and ``rewrite remove_qualifier $X: "const"``:
a qualifier added to or removed from the declaration of the kernel parameter that ``$X``
names. Each is the other's inverse. Such an edit changes a declaration, not the code at the
match: every use of one parameter is the same site (``klc.pipeline``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from klc.edits.base import InvertContext, KindEdit, PlanContext, enclosing_function, target_of
from klc.edits.bytes import ByteEdit
from klc.edits.render import fill_holes
from klc.errors import KlcError
from klc.rule import QUALIFIERS, CompileContext, Edit, EditSpec, Rule
from klc.rule.printer import string
from klc.rule.registry import EditKind

if TYPE_CHECKING:
    from klc.cuda.model import Param
    from klc.match import Match

_QUALIFIERS_AFTER_STAR = frozenset({"__restrict__", "__restrict", "restrict"})


@dataclass(frozen=True)
class _Qualifier(KindEdit):
    target: str  # the metavariable, without "$"
    value: str  # the qualifier

    groupable: ClassVar[bool] = True
    _verb: ClassVar[str] = ""

    def declaration_target(self) -> str | None:
        return self.target

    def flips(self) -> tuple[str, str, bool] | None:
        pred = "is_restrict" if self.value in _QUALIFIERS_AFTER_STAR else "is_const" \
            if self.value == "const" else None
        return (pred, self.target, isinstance(self, RemoveQualifier)) if pred else None

    def invert(self, ix: InvertContext) -> Edit | None:
        if self.target not in ix.bound:
            raise KlcError(f"{ix.where}: the qualifier's parameter ${self.target} is not "
                           "bound by the skill's anchor")
        other = RemoveQualifier if isinstance(self, AddQualifier) else AddQualifier
        return other(self.target, self.value)

    def lines(self, rule: Rule) -> list[str]:
        return [f"  rewrite {self.kind} ${self.target}: {string(self.value)}"]

    def describe(self) -> list[str]:
        return [f"  {self._verb} the qualifier {self.value} on ${self.target}"]


@dataclass(frozen=True)
class AddQualifier(_Qualifier):
    kind: ClassVar[str] = "add_qualifier"
    _verb: ClassVar[str] = "add"

    def plan(self, px: PlanContext) -> None:
        px.add(_add_qualifier(px.match, self, px.holes))


@dataclass(frozen=True)
class RemoveQualifier(_Qualifier):
    kind: ClassVar[str] = "remove_qualifier"
    _verb: ClassVar[str] = "remove"

    def plan(self, px: PlanContext) -> None:
        px.add(_remove_qualifier(px.match, self, px.holes))


def _compile(e: EditSpec, cx: CompileContext) -> tuple[str, str]:
    """(the target metavariable, the qualifier): bound, and a known qualifier."""
    what = f"rewrite {e.kind}"
    target_tok, value = e.args
    target = target_of(target_tok, cx, what)
    if value.value not in QUALIFIERS:
        cx.errs.add(value.line, value.col, f"{what}: unknown qualifier "
                    f"{json.dumps(value.value)}; qualifiers are: {', '.join(QUALIFIERS)}")
    return target, value.value


def compile_add(e: EditSpec, cx: CompileContext) -> Edit | None:
    return AddQualifier(*_compile(e, cx), line=e.line, col=e.col)


def compile_remove(e: EditSpec, cx: CompileContext) -> Edit | None:
    return RemoveQualifier(*_compile(e, cx), line=e.line, col=e.col)


def _parameter(match: Match, edit: _Qualifier, holes: dict[str, str]
               ) -> tuple[Param, str, str]:
    """(the parameter $X names, its text, the qualifier with holes filled)."""
    unit, fn = match.unit, enclosing_function(match, edit)
    b = match.bindings.get(edit.target)
    if b is None:
        raise KlcError(f"{match.rule.location}: ${edit.target} is not bound by the anchor")
    name = b.text.strip()
    param = fn.param(name)
    if param is None:
        raise KlcError(f"{unit.where(b.start)}: `{name}` is not a parameter of {fn.name}; "
                       f"{edit.kind} applies to kernel parameters")
    return param, unit.text(param.start, param.end), fill_holes(edit.value, holes)


def _add_qualifier(match: Match, edit: _Qualifier, holes: dict[str, str]) -> ByteEdit | None:
    param, text, qual = _parameter(match, edit, holes)
    # already there: const of the pointee (`const T* p`, not the `* const p` of the
    # pointer itself), __restrict__ of the pointer; another qualifier as a word
    if (param.const if qual == "const" else param.restrict
            if qual in _QUALIFIERS_AFTER_STAR else
            re.search(rf"(?<!\w){re.escape(qual)}(?!\w)", text) is not None):
        return None
    if qual in _QUALIFIERS_AFTER_STAR:
        # after the `*` nearest the name, found in the tree (not a `*` in a comment);
        # an array parameter (`float x[]`) has no star to qualify: no edit
        if param.star_end < 0:
            return None
        return ByteEdit(param.star_end, param.star_end, f" {qual}", edit.kind)
    return ByteEdit(param.start, param.start, f"{qual} ", edit.kind)


def _remove_qualifier(match: Match, edit: _Qualifier, holes: dict[str, str]
                      ) -> ByteEdit | None:
    param, text, qual = _parameter(match, edit, holes)
    m = re.search(rf"(?<!\w){re.escape(qual)}(?!\w)[ \t]*", text)
    if m is None:
        return None
    start, end = m.start(), m.end()  # the qualifier and the blanks after it
    return ByteEdit(param.start + len(text[:start].encode()),
                    param.start + len(text[:end].encode()), "", edit.kind)


# the kinds this file defines (``klc.plugins`` hands them to the rule loader)
KINDS = (
    EditKind("add_qualifier", compile_add, AddQualifier),
    EditKind("remove_qualifier", compile_remove, RemoveQualifier),
)
