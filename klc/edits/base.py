"""What every rewrite kind's file uses: the plan of one match (``Rewrite``, the byte edits
and launch changes so far) and the context an edit is planned and inverted in.

A kind is one file in this package: a frozen dataclass subclassing ``klc.rule.Edit`` with
``plan`` (edit + match -> byte edits), ``invert`` (the edit of the inverse skill,
``klc.reverse``), ``lines`` (printed in the rule language), ``describe`` (for a prompt),
``groupable``, and a ``compile`` (a ``rewrite`` clause's spec -> the edit) that its file
names in ``KINDS`` (a ``klc.rule.registry.EditKind`` per grammar keyword).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from klc.errors import KlcError
from klc.rule import CodeBlock, CompileContext, Edit, Rule, parse_problem
from klc.rule.code import code_refs, for_parsing

if TYPE_CHECKING:
    from klc.cuda.model import Function
    from klc.edits.bytes import ByteEdit
    from klc.match import Match


@dataclass
class Rewrite:
    """The edits one match asks for, and the launch-geometry changes for the spec."""

    match: Match
    holes: dict[str, str]
    edits: list[ByteEdit] = field(default_factory=list)
    launch: list[tuple[str, str, str, int]] = field(default_factory=list)  # dim, axis, op, k


@dataclass
class PlanContext:
    """One match being planned: its ``Rewrite``, and what the edits that prepare (``within``)
    made: the text of each rewritten binding (``overrides``), and the same rewrites as
    source edits (``staged``; a ``replace`` template that writes a binding out takes its
    edits over)."""

    rw: Rewrite
    overrides: dict[str, str]
    staged: list[ByteEdit]

    @property
    def match(self) -> Match:
        return self.rw.match

    @property
    def holes(self) -> dict[str, str]:
        return self.rw.holes

    def add(self, edit: ByteEdit | None) -> None:
        if edit is not None:
            self.rw.edits.append(edit)


@dataclass
class InvertContext:
    """A simplification being inverted into a skill (``klc.reverse.mechanical_inverse``):
    ``anchor`` is the skill's anchor, ``bound`` what it binds, ``attr_text`` the attribute
    text a ``remove_attribute`` took out of the pass's anchor; ``skill_text`` turns pass
    text into skill text (the metavariables the skill's anchor does not bind become holes),
    ``erased_hole`` names the hole of one such metavariable."""

    rule: Rule
    where: str
    anchor: str
    bound: frozenset[str]
    attr_text: str
    skill_text: Callable[[str], str]
    erased_hole: Callable[[str], str]


@dataclass(frozen=True)
class KindEdit(Edit):
    """The behaviour every kind gives (the data is the kind's own dataclass fields)."""

    def prepare(self, px: PlanContext) -> None:
        """Before any edit of the rule plans: what the others need (none by default)."""
        return None

    def plan(self, px: PlanContext) -> None:
        """Add this edit's byte edits (or launch change) at the match to ``px``."""
        raise NotImplementedError

    def invert(self, ix: InvertContext) -> Edit | None:
        """The inverse skill's edit (None: it has none)."""
        raise NotImplementedError

    def flips(self) -> tuple[str, str, bool] | None:
        """(predicate, metavariable, whether it held before) when this edit makes a one-
        metavariable guard predicate change (a qualifier edit: ``is_restrict($X)``)."""
        return None

    def strip_from_anchor(self, anchor: str) -> tuple[str, str] | None:
        """For a simplification without ``replace``, whose inverse skill keeps its anchor:
        (the anchor less what this edit removed, the text removed), or None."""
        return None


def enclosing_function(match: Match, edit: Edit) -> Function:
    if match.function is None:
        raise KlcError(f"{match.rule.location}: rewrite {edit.kind} needs an enclosing "
                       f"function, but the match at {match.unit.where(match.start)} has none")
    return match.function


def compile_code(code: CodeBlock, cx: CompileContext, what: str,
                 use_metavar: Callable[[str, str, int, int, str], None] | None = None
                 ) -> str | None:
    """A template code block: not empty, its names bound or declared, parsing as CUDA. The
    text, or None when it is empty."""
    if not code.text.strip():
        cx.errs.add(code.line, code.col, f"{what}: the code block is empty")
        return None
    cx.use_refs(code.text, code.position, what, use_metavar)
    problem = parse_problem(for_parsing(code.text), template=True)
    if problem is not None:
        line, col = code.position(problem[0])
        cx.errs.add(line, col, f"{what}: the template {problem[1]}")
    return code.text


def target_of(tok: object, cx: CompileContext, what: str) -> str:
    """A clause's ``$X`` (or ``$$$X``) target: bound by the anchor; its name without ``$``."""
    shown = str(tok)
    kind = "sequence" if shown.startswith("$$$") else "metavar"
    cx.use_metavar(kind, shown.lstrip("$"), tok.line, tok.column, what)  # type: ignore[attr-defined]
    return shown.lstrip("$")


def indent_block(text: str, by: str = "    ") -> str:
    """Code for a prompt: each non-blank line indented."""
    return "\n".join(by + ln if ln.strip() else ln for ln in text.split("\n"))


def metavar_names(text: str) -> set[str]:
    """The metavariables a code text names (holes and the wildcard aside)."""
    return {r.name for r in code_refs(text) if r.kind != "hole" and r.name != "_"}


def to_holes(text: str, names: dict[str, str]) -> str:
    """Metavariables named in ``names`` ($X and $$$X) become holes ``?name``."""
    def sub(m: re.Match[str]) -> str:
        key = m.group(1) or m.group(2)
        return f"?{names[key]}" if key in names else m.group(0)

    return re.sub(r"\$\$\$([A-Za-z_]\w*)|\$([A-Za-z_]\w*)", sub, text)
