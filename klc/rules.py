"""The rule loader: ``.rule`` text -> lark tree -> spec dataclasses -> compiled ``Rule``.

Two steps, like ast-grep's rule configs. ``parse_specs`` turns the text into ``RuleSpec``s:
what the file says, with every element's line:column, nothing checked beyond the grammar
(``grammar/rule.lark``, the one definition of the syntax). ``compile_spec`` checks a spec
against everything the grammar cannot know and builds the ``Rule`` the engine runs: known
kinds, contexts and predicates; metavariables bound by the anchor; holes declared, used and
with a domain; anchors and rewrite templates that parse as CUDA. Every error names the file,
line and column of what is wrong, down to a token inside a code block, so that a rule author
never meets a problem first at rewrite time. All errors of a file are reported together.

``rule_to_text`` prints a rule back in the language; loading the printed text gives an equal
rule (locations aside). The lineage stage writes inverse rules to ``skills/`` with it.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from tree_sitter import Node, Query, QueryCursor

from klc.errors import KlcError, where
from klc.frontend import F_BODY, F_DECLARATOR, F_VALUE
from klc.guards import (
    GuardAnd,
    GuardArg,
    GuardCall,
    GuardExpr,
    GuardNot,
    GuardOr,
    calls,
    check_call,
    guard_text,
)

KINDS = ("simplification", "skill")
CONTEXTS = ("global", "device", "any", "loop", "kernel_scope")
EDIT_KINDS = ("replace", "insert_body_start", "remove_statement", "add_qualifier",
              "remove_qualifier", "add_attribute", "remove_attribute", "launch", "within")
HOLE_TYPES = ("int", "enum", "ident", "expr", "stmts")
QUALIFIERS = ("const", "volatile", "__restrict__", "__restrict", "restrict")
CARD_FIELDS = ("intent", "where", "conditions", "precision", "effect", "pitfalls", "provenance",
               "verdict")
# a learned skill's measured verdict (klc/reverse.py): faster somewhere, never beyond the
# noise either way, slower wherever measured ("when not" knowledge: never recommended), or
# not measured yet (a compile-only walk)
VERDICTS = ("faster", "neutral", "slower", "unmeasured")
REPEATED_CARD_FIELDS = ("effect", "pitfalls", "provenance")
SINGLE_FIELDS = ("kind", "description", "context", "anchor", "guard", "card", "inverse")


class RuleError(KlcError):
    """One or more problems in rule files, each a complete ``file:line:col: message``."""

    def __init__(self, errors: list[str]):
        self.errors = tuple(errors)
        super().__init__("\n".join(self.errors))


# --------------------------------------------------------------------------------------
# The compiled model


@dataclass(frozen=True)
class Edit:
    """One ``rewrite`` clause. ``template`` holds the code of ``replace`` and
    ``insert_body_start``; ``target`` the metavariable name (``X``) of a qualifier edit;
    ``value`` the qualifier or attribute text; ``dim``/``axis``/``op``/``factor`` a launch
    edit (``grid``/``block``, ``x``/``y``/``z``, ``*`` or ``/``, an int or ``"?hole"``);
    ``sub`` the sub-rule of a ``within`` edit (``target`` names the metavariable whose code
    it rewrites)."""

    kind: str
    template: str | None = None
    target: str | None = None
    value: str | None = None
    dim: str | None = None
    axis: str | None = None
    op: str | None = None
    factor: int | str | None = None
    sub: Rule | None = None
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)


@dataclass(frozen=True)
class HoleDecl:
    """A declared hole: ``int`` with a set (``values``) or range (``lo``..``hi``), ``enum``
    with ``values``, or an open category (``ident``, ``expr``, ``stmts``)."""

    name: str
    type: str
    values: tuple[int | str, ...] | None = None
    lo: int | None = None
    hi: int | None = None
    default: int | str | None = None
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)

    def domain(self) -> tuple[int | str, ...] | None:
        """Every value of a finite domain (what search enumerates), or None when open."""
        if self.values is not None:
            return self.values
        if self.lo is not None and self.hi is not None:
            return tuple(range(self.lo, self.hi + 1))
        return None

    def domain_text(self) -> str:
        if self.values is not None:
            return "{" + ", ".join(str(v) for v in self.values) + "}"
        if self.lo is not None:
            return f"{self.lo}..{self.hi}"
        return f"a C {'identifier' if self.type == 'ident' else self.type}"

    def validate(self, value: str) -> str:
        """Check an untrusted value (from search, a user or an LLM) against the declared type
        and domain; return it normalised, or raise KlcError saying why not."""
        text = str(value).strip()
        problem = _hole_value_problem(self, text)
        if problem:
            raise KlcError(f"hole ?{self.name}: {problem}")
        return str(int(text, 10)) if self.type == "int" else text


@dataclass(frozen=True)
class Card:
    """What a rule means, in words. A skill learned from several lineages lists each
    measured effect, pitfall and provenance."""

    intent: str = ""
    where: str = ""
    conditions: str = ""
    effect: tuple[str, ...] = ()
    pitfalls: tuple[str, ...] = ()
    provenance: tuple[str, ...] = ()
    verdict: str = ""  # one of VERDICTS, or "" (a hand-written rule)
    # how the rewrite changes results (fast-math intrinsics: the last bits of a value), ""
    # when it keeps them exactly: such a rule is applied only under the gate, or when named
    precision: str = ""


@dataclass(frozen=True)
class Inverse:
    """A simplification's ``inverse { ... }`` block: what its inverse skill needs beyond the
    mechanical swap (klc/reverse.py): a name, a skill file, a description, the forward-only
    conditions (``guard``, conjoined with the pass guards that still hold on the skill's
    anchor), and hole declarations for values the simplification erases (named after the
    metavariable, lower case: ``$$$THREADS`` -> ``hole threads``)."""

    name: str = ""
    description: str = ""
    guard: GuardExpr | None = None
    holes: dict[str, HoleDecl] = field(default_factory=dict)
    family: str = ""  # the skill file (skills/<family>.rule); default: the pass file's stem
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Rule:
    """A compiled rule: what the matcher, the guards and the rewriter run."""

    name: str
    kind: str
    description: str
    path: str = field(compare=False)
    line: int = field(compare=False)
    col: int = field(compare=False)
    anchor: str
    anchor_line: int = field(compare=False)
    anchor_col: int = field(compare=False)
    context: tuple[str, ...]
    guard: GuardExpr | None
    edits: tuple[Edit, ...]
    holes: dict[str, HoleDecl]
    card: Card
    metavars: frozenset[str]  # bound by the anchor, without "$" ($_ binds nothing)
    sequence_metavars: frozenset[str] = frozenset()  # those written $$$X
    inverse: Inverse | None = None  # a simplification's inverse block
    # ``metavar $X: identifier`` lines: (name without "$", kind), sorted by name
    metavar_kinds: tuple[tuple[str, str], ...] = ()

    def __hash__(self) -> int:  # holes is a dict: hash what identifies a rule
        return hash((self.name, self.kind, self.anchor))

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"


# --------------------------------------------------------------------------------------
# Step 1: text -> specs


@dataclass(frozen=True)
class CodeBlock:
    """A dedented ```` ``` ```` block, and where each of its lines starts in the file, so an
    offset inside the block maps back to the file's line:column."""

    text: str
    line: int  # of the opening backticks
    col: int
    starts: tuple[tuple[int, int], ...]  # per line of text: (file line, file column)

    def position(self, offset: int) -> tuple[int, int]:
        """File (line, col) of a character offset into ``text``."""
        offset = max(0, min(offset, len(self.text)))
        if not self.starts:
            return self.line, self.col + 3
        index = self.text.count("\n", 0, offset)
        line_start = self.text.rfind("\n", 0, offset) + 1
        file_line, file_col = self.starts[min(index, len(self.starts) - 1)]
        return file_line, file_col + offset - line_start


@dataclass(frozen=True)
class Text:
    """A string value and the position of its first character in the file."""

    value: str
    line: int
    col: int
    simple: bool  # a one-line "..." without escapes: offsets map to columns exactly

    def position(self, offset: int) -> tuple[int, int]:
        return (self.line, self.col + 1 + offset) if self.simple else (self.line, self.col)


@dataclass(frozen=True)
class EditSpec:
    kind: str
    code: CodeBlock | None = None
    target: str | None = None  # "$X" as written
    target_pos: tuple[int, int] = (0, 0)
    value: Text | None = None
    dim: str | None = None  # "grid.x" as written, for a launch edit
    op: str | None = None
    factor: str | None = None  # the INT or HOLE token
    factor_pos: tuple[int, int] = (0, 0)
    items: tuple[tuple[str, Any, int, int], ...] = ()  # a within block's items
    line: int = 0
    col: int = 0


@dataclass(frozen=True)
class HoleSpec:
    name: str
    type: str
    type_pos: tuple[int, int]
    domain: str | None  # "set" | "range" | "enum" | None
    values: tuple[Token, ...]
    default: Token | None
    line: int
    col: int


@dataclass(frozen=True)
class FieldSpec:
    """One field of a rule as read: ``name`` is the keyword (``kind``, ``rewrite``, ...)."""

    name: str
    value: Any
    line: int
    col: int


@dataclass(frozen=True)
class RuleSpec:
    name: str
    path: str
    line: int
    col: int
    fields: tuple[FieldSpec, ...]


@cache
def grammar() -> Lark:
    """The lark parser of the rule language (built once per process)."""
    from klc.library import _packaged

    text = (_packaged("grammar") / "rule.lark").read_text(encoding="utf-8")
    options = {"parser": "lalr", "propagate_positions": True, "maybe_placeholders": True}
    # lark's cache of the parser tables, in klc's own cache folder ($KLC_CACHE_DIR or
    # ~/.cache/klc; not a shared temporary folder, since lark unpickles it): the file holds
    # a hash of the grammar, the options and lark's version, and is rebuilt when they differ
    root = os.environ.get("KLC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "klc")
    try:
        folder = Path(root) / "lark"
        folder.mkdir(parents=True, exist_ok=True)
        return Lark(text, cache=str(folder / "rule-grammar.cache"), **options)
    except Exception:  # an unwritable folder, an unreadable cache file: build the tables
        return Lark(text, **options)


_TERMINAL_WORDS = {
    "NAME": "a name", "DOTTED": "a dotted name (grid.x)", "CODE": "a ```code block```",
    "STRING": 'a "string"', "LONG_STRING": 'a """string"""', "METAVAR": "a metavariable ($X)",
    "HOLE": "a hole (?name)", "INT": "an integer", "FLOAT": "a number",
    "LAUNCH_OP": '"*=" or "/="', "COMPARE": "a comparison (<, <=, ==, !=, >=, >)",
    "CARD_KEY": "a card field (" + ", ".join(CARD_FIELDS) + ")", "$END": "the end of the file",
}


def _expected_words(names: set[str]) -> str:
    terminals = {t.name: t for t in grammar().terminals}
    words = []
    for name in names:
        if name in _TERMINAL_WORDS:
            words.append(_TERMINAL_WORDS[name])
            continue
        t = terminals.get(name)
        if t is not None and t.pattern.type == "str":
            words.append(json.dumps(t.pattern.value))
        else:
            words.append(name.lower())
    return ", ".join(sorted(set(words), key=lambda w: (not w.startswith('"'), w)))


def _syntax_error(e: UnexpectedInput, text: str, path: str) -> KlcError:
    line, col = getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0
    if isinstance(e, UnexpectedToken):
        tok = e.token
        expected = set(e.expected) - {"$END"} if tok.type != "$END" else set(e.expected)
        found = "the end of the file" if tok.type == "$END" else json.dumps(str(tok))
        if tok.type == "$END":
            line, col = _end_position(text)
        keywords = {"KIND", "ANCHOR", "REWRITE", "GUARD"}
        if tok.type == "NAME" and expected & keywords:
            known = ", ".join(("kind", "description", "context", "anchor", "metavar",
                               "guard", "rewrite", "hole", "card", "inverse"))
            close = difflib.get_close_matches(str(tok), known.split(", "), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            return KlcError(f"{where(path, line, col)}: unknown field {found}{hint}; "
                            f"the fields of a rule are: {known}")
        if tok.type == "NAME" and expected == {"CARD_KEY", "RBRACE"}:
            return KlcError(f"{where(path, line, col)}: unknown card field {found}; "
                            f"the card fields are: {', '.join(CARD_FIELDS)}")
        return KlcError(f"{where(path, line, col)}: expected one of: "
                        f"{_expected_words(expected)} but found {found}")
    if isinstance(e, UnexpectedCharacters):
        ch = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        hint = ""
        if ch == "`":
            hint = " (a code block is delimited by three backticks: ```)"
        elif ch == '"':
            hint = " (unterminated string?)"
        allowed = set(e.allowed or ())
        exp = f"; expected one of: {_expected_words(allowed)}" if allowed else ""
        return KlcError(f"{where(path, line, col)}: unexpected character {json.dumps(ch)}"
                        f"{hint}{exp}")
    if isinstance(e, UnexpectedEOF):
        line, col = _end_position(text)
        return KlcError(f"{where(path, line, col)}: unexpected end of file; expected one of: "
                        f"{_expected_words(set(e.expected))}")
    return KlcError(f"{where(path, line, col)}: syntax error: {e}")


def _end_position(text: str) -> tuple[int, int]:
    stripped = text.rstrip()
    return stripped.count("\n") + 1, len(stripped) - (stripped.rfind("\n") + 1) + 1


def parse_specs(text: str, path: str) -> list[RuleSpec]:
    """Step 1: the rules of a file as written (syntax checked, nothing else)."""
    try:
        tree = grammar().parse(text)
    except UnexpectedInput as e:
        raise _syntax_error(e, text, path) from None
    return [_rule_spec(r, path) for r in tree.children if isinstance(r, Tree)]


def parse_guard(text: str, path: str = "<guard>") -> GuardExpr:
    """A guard expression on its own (``is_restrict($X) and not in_loop``), checked against
    the predicate vocabulary: for tools and tests that evaluate guards without a rule."""
    prefix = "rule __guard__ { guard: "
    try:
        tree = grammar().parse(prefix + text + "\n}")
    except UnexpectedInput as e:
        raise _syntax_error(e, prefix + text, path) from None
    fields = [f for f in tree.children[0].children[1:] if isinstance(f, Tree)]
    if len(fields) != 1 or fields[0].data != "guard_field":
        raise KlcError(f"{path}: not one guard expression: {text!r}")
    guard = _guard(fields[0].children[0])
    problems = [m for c in calls(guard) for _, _, m in check_call(c)]
    if problems:
        raise KlcError(f"{path}: {'; '.join(problems)}")
    return guard


def _rule_spec(tree: Tree, path: str) -> RuleSpec:
    name_tok = tree.children[0]
    fields = tuple(_field_spec(f) for f in tree.children[1:] if isinstance(f, Tree))
    return RuleSpec(str(name_tok), path, tree.meta.line, tree.meta.column, fields)


def _field_spec(tree: Tree) -> FieldSpec:
    kind = str(tree.data)
    line, col = tree.meta.line, tree.meta.column
    ch = tree.children
    if kind == "kind_field":
        return FieldSpec("kind", ch[0], line, col)
    if kind == "description_field":
        return FieldSpec("description", _text(ch[0]), line, col)
    if kind == "context_field":
        return FieldSpec("context", tuple(ch), line, col)
    if kind == "anchor_field":
        return FieldSpec("anchor", _code(ch[0]), line, col)
    if kind == "guard_field":
        return FieldSpec("guard", _guard(ch[0]), line, col)
    if kind == "rewrite_field":
        return FieldSpec("rewrite", _edit_spec(ch[0], line, col), line, col)
    if kind == "hole_field":
        name, type_tok, domain, default_tree = ch
        default = default_tree.children[0] if default_tree is not None else None
        domain_kind = None if domain is None else str(domain.data).removeprefix("hole_")
        values = tuple(_value_token(v) for v in domain.children) if domain is not None else ()
        return FieldSpec("hole", HoleSpec(str(name), str(type_tok), (type_tok.line,
                                                                      type_tok.column),
                                          domain_kind, values,
                                          _value_token(default) if default is not None
                                          else None, line, col), line, col)
    if kind == "inverse_field":
        return FieldSpec("inverse", tuple(_inverse_item(i) for i in ch), line, col)
    if kind == "metavar_field":
        return FieldSpec("metavar", (ch[0], tuple(ch[1:])), line, col)
    assert kind == "card_field"
    items = tuple((str(item.children[0]), _text(item.children[1]), item.meta.line,
                   item.meta.column) for item in ch)
    return FieldSpec("card", items, line, col)


def _inverse_item(tree: Tree) -> tuple[str, Any, int, int]:
    """One item of an inverse block: ("name", Token) | ("description", Text) |
    ("guard", GuardExpr) | ("hole", HoleSpec)."""
    kind = str(tree.data).removeprefix("inverse_")
    if kind == "hole_field":
        return ("hole", _field_spec(tree).value, tree.meta.line, tree.meta.column)
    value = tree.children[0]
    if kind == "description":
        value = _text(value)
    elif kind == "guard":
        value = _guard(value)
    return (kind, value, tree.meta.line, tree.meta.column)


def _value_token(v: Token | Tree) -> Token:
    """A hole value: a token; a string value becomes a STRING token holding its text."""
    if isinstance(v, Tree):
        t = _text(v)
        return Token("STRING", t.value, line=t.line, column=t.col)
    return v


def _text(tree: Tree) -> Text:
    tok = tree.children[0]
    raw = str(tok)
    if tok.type == "LONG_STRING":
        body = raw[3:-3]
        lines = body.split("\n")
        while lines and not lines[0].strip():
            lines.pop(0)
        while lines and not lines[-1].strip():
            lines.pop()
        rest = [ln for ln in lines[1:] if ln.strip()]
        indent = _common_indent(rest)
        value = "\n".join([lines[0].strip()] + [ln[len(indent):].rstrip() for ln in lines[1:]]
                          ) if lines else ""
        return Text(value, tok.line, tok.column, False)
    try:  # (strict off: a tab or another control character inside quotes is taken as it is)
        value = json.loads(raw, strict=False)
    except json.JSONDecodeError as e:
        raise _BadText(tok.line, tok.column + e.pos, f"bad string: {e.msg}") from None
    return Text(value, tok.line, tok.column, "\\" not in raw)


class _BadText(Exception):
    """A quoted string that does not decode (``\\q``); load_rules_text locates it."""

    def __init__(self, line: int, col: int, msg: str) -> None:
        super().__init__(msg)
        self.line, self.col, self.msg = line, col, msg


def _common_indent(lines: list[str]) -> str:
    indents = [ln[: len(ln) - len(ln.lstrip())] for ln in lines if ln.strip()]
    if not indents:
        return ""
    common = indents[0]
    for ind in indents[1:]:
        while not ind.startswith(common):
            common = common[:-1]
    return common


def _code(tok: Token) -> CodeBlock:
    """Dedent a code block (common leading whitespace), drop the blank lines around it, and
    remember where each line starts in the file."""
    body = str(tok)[3:-3]
    raw = body.split("\n")
    starts = [(tok.line + i, tok.column + 3 if i == 0 else 1) for i in range(len(raw))]
    lines = list(zip(raw, starts, strict=True))
    while lines and not lines[0][0].strip():
        lines.pop(0)
    while lines and not lines[-1][0].strip():
        lines.pop()
    if not lines:
        return CodeBlock("", tok.line, tok.column, ())
    inline_first = lines[0][1][0] == tok.line  # text right after the opening backticks
    indent = _common_indent([ln for ln, _ in (lines[1:] if inline_first else lines)])
    out: list[str] = []
    out_starts: list[tuple[int, int]] = []
    for i, (ln, (fl, fc)) in enumerate(lines):
        cut = len(ln) - len(ln.lstrip()) if i == 0 and inline_first else (
            len(indent) if ln.startswith(indent) else len(ln) - len(ln.lstrip()))
        out.append(ln[cut:].rstrip())
        out_starts.append((fl, fc + cut))
    return CodeBlock("\n".join(out), tok.line, tok.column, tuple(out_starts))


def _edit_spec(tree: Tree, line: int, col: int) -> EditSpec:
    kind = str(tree.data).removesuffix("_edit")
    ch = tree.children
    if kind in ("replace", "insert_body_start", "remove_statement"):
        return EditSpec(kind, code=_code(ch[0]), line=line, col=col)
    if kind in ("add_qualifier", "remove_qualifier"):
        return EditSpec(kind, target=str(ch[0]), target_pos=(ch[0].line, ch[0].column),
                        value=_text(ch[1]), line=line, col=col)
    if kind in ("add_attribute", "remove_attribute"):
        return EditSpec(kind, value=_text(ch[0]), line=line, col=col)
    if kind == "within":
        items = []
        for item in ch[1:]:
            what = str(item.data).removeprefix("within_")
            value = _code(item.children[0]) if what in ("anchor", "replace") \
                else _guard(item.children[0])
            items.append((what, value, item.meta.line, item.meta.column))
        return EditSpec(kind, target=str(ch[0]), target_pos=(ch[0].line, ch[0].column),
                        items=tuple(items), line=line, col=col)
    dim, op, factor = ch
    return EditSpec(kind, dim=str(dim), op=str(op), factor=str(factor),
                    factor_pos=(factor.line, factor.column), line=line, col=col)


def _guard(tree: Tree | Token) -> GuardExpr:
    assert isinstance(tree, Tree)
    kind = str(tree.data)
    line, col = tree.meta.line, tree.meta.column
    if kind == "guard_call":
        name, *args = tree.children
        return GuardCall(str(name), tuple(_guard_arg(a) for a in args if a is not None),
                         line, col)
    if kind == "guard_neg":
        return GuardNot(_guard(tree.children[0]), line, col)
    operands = tuple(_guard(c) for c in tree.children)
    return (GuardAnd if kind == "guard_and" else GuardOr)(operands, line, col)


def _guard_arg(a: Token | Tree) -> GuardArg:
    if isinstance(a, Tree):  # a string
        t = _text(a)
        return GuardArg("string", t.value, t.line, t.col)
    raw = str(a)
    kinds = {"METAVAR": "metavar", "HOLE": "hole", "INT": "int", "FLOAT": "float",
             "NAME": "name", "DOTTED": "name", "COMPARE": "op"}
    kind = kinds[a.type]
    value: str | int | float = raw
    if kind == "metavar":
        kind, value = ("sequence", raw[3:]) if raw.startswith("$$$") else ("metavar", raw[1:])
    elif kind == "hole":
        value = raw[1:]
    elif kind == "int":
        value = int(raw)
    elif kind == "float":
        value = float(raw)
    return GuardArg(kind, value, a.line, a.column)


# --------------------------------------------------------------------------------------
# Code blocks: metavariables, holes, and parsing as CUDA

_CODE_SCAN = re.compile(
    r"""(?P<skip>//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
      | (?P<seq>\$\$\$(?P<seqname>[A-Za-z_]\w*))
      | (?P<meta>\$(?P<metaname>[A-Za-z_]\w*))
      | (?P<hole>\?(?P<holename>[A-Za-z_]\w*))""",
    re.X,
)


@dataclass(frozen=True)
class CodeRef:
    """A metavariable (``$X``: kind ``metavar``; ``$$$X``: ``sequence``) or a hole (``?h``)
    found in code, outside comments and string literals."""

    kind: str
    name: str
    start: int
    end: int


def code_refs(text: str) -> Iterator[CodeRef]:
    """The metavariables and holes of a code text, in order."""
    for m in _CODE_SCAN.finditer(text):
        if m.group("seq"):
            yield CodeRef("sequence", m.group("seqname"), m.start(), m.end())
        elif m.group("meta"):
            yield CodeRef("metavar", m.group("metaname"), m.start(), m.end())
        elif m.group("hole"):
            yield CodeRef("hole", m.group("holename"), m.start(), m.end())


_STATEMENT_WRAP = ("void __klc_anchor__() {\n", "\n}\n")
_WRAPPERS = (
    _STATEMENT_WRAP,
    ("", "\n"),
    ("void __klc_anchor__() {\nauto __klc_e__ = (", "\n);\n}\n"),
)
# A hole value must be one expression on its own: no newline before the closing parenthesis,
# so that a trailing // comment (which would swallow the rest of a template line) is refused.
_HOLE_EXPR_WRAP = ("void __klc_anchor__() {\nauto __klc_e__ = (", ");\n}\n")
# Statements likewise end right before the closing brace: a trailing // comment, which would
# swallow the rest of the template's line, is refused.
_HOLE_STMTS_WRAP = ("void __klc_anchor__() {\n", "}\n")
_PLACEHOLDER_END = re.compile(r"\$+[A-Za-z_]\w*$")


@cache
def _problem_query() -> Query:
    from klc.frontend import LANGUAGE

    return Query(LANGUAGE, "(ERROR) @error (MISSING) @missing")


def parse_problem(text: str, wrappers: tuple[tuple[str, str], ...] = _WRAPPERS,
                  template: bool = False) -> tuple[int, str] | None:
    """None when the code parses as CUDA in one of the wrappers (top level, statements in a
    body, an expression); else (character offset into ``text``, message) from the attempt
    that got furthest. A missing ``;`` right after a metavariable is allowed: ``$BODY`` may
    stand for a whole statement. A ``template`` (rendered as text, never matched) may also
    hold a statement metavariable or hole that tree-sitter could only wrap in an ERROR node
    (``{ ?body }``)."""
    from klc.frontend import parser

    best: tuple[int, str] | None = None
    for prefix, suffix in wrappers:
        src = (prefix + text + suffix).encode()
        tree = parser().parse(src)
        if not tree.root_node.has_error:
            return None
        caps = QueryCursor(_problem_query()).captures(tree.root_node)
        problems = sorted(caps.get("error", []) + caps.get("missing", []),
                          key=lambda n: n.start_byte)
        first = next((n for n in problems if not _allowed_missing(n, src)
                      and not (template and _lone_placeholder(n, src))), None)
        if first is None:
            return None
        offset = len(src[: first.start_byte].decode("utf-8", "replace")) - len(prefix)
        offset = max(0, min(offset, len(text)))
        message = _problem_words(first, src)
        if best is None or offset > best[0]:
            best = (offset, message)
    return best


def _allowed_missing(node: Node, src: bytes) -> bool:
    if not node.is_missing or node.type != ";":
        return False
    before = src[: node.start_byte].decode("utf-8", "replace").rstrip()
    return bool(_PLACEHOLDER_END.search(before))


def _lone_placeholder(node: Node, src: bytes) -> bool:
    text = src[node.start_byte:node.end_byte].decode("utf-8", "replace").strip()
    return node.type == "ERROR" and bool(re.fullmatch(r"\$+[A-Za-z_]\w*", text))


def _problem_words(node: Node, src: bytes) -> str:
    if node.is_missing:
        return f'does not parse as CUDA: missing "{node.type}"'
    text = src[node.start_byte:node.end_byte].decode("utf-8", "replace")
    first = next((c for c in _leaves(node) if c.end_byte > c.start_byte), None)
    token = src[first.start_byte:first.end_byte].decode("utf-8", "replace") if first \
        else text
    snippet = " ".join(token.split())[:30]
    return f'does not parse as CUDA: unexpected "{snippet}"' if snippet \
        else "does not parse as CUDA"


def _leaves(node: Node) -> Iterator[Node]:
    if node.child_count == 0:
        yield node
    for c in node.children:
        yield from _leaves(c)


def _for_parsing(text: str) -> str:
    """Holes become identifiers of the same length (``?tile`` -> ``$tile``: tree-sitter-cuda
    accepts ``$`` in identifiers), so positions stay exact."""
    return re.sub(r"\?(?=[A-Za-z_])", "$", text)


_KEYWORD_WORDS = (
    "alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t "
    "char16_t char32_t class compl concept const consteval constexpr constinit const_cast "
    "continue co_await co_return co_yield decltype default delete do double dynamic_cast else "
    "enum explicit export extern false float for friend goto if inline int long mutable "
    "namespace new noexcept not not_eq nullptr operator or or_eq private protected public "
    "register reinterpret_cast requires return short signed sizeof static static_assert "
    "static_cast struct switch template this thread_local throw true try typedef typeid "
    "typename union unsigned using virtual void volatile wchar_t while xor xor_eq restrict "
    "__global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ "
    "__restrict __forceinline__ __noinline__ __launch_bounds__ __align__ __asm__ __asm "
    "__syncthreads threadIdx blockIdx blockDim gridDim warpSize"
)
_KEYWORDS = frozenset(_KEYWORD_WORDS.split())
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FORBIDDEN = re.compile(r"\b(?:asm|__asm__|__asm|_Pragma|__pragma)\b|^[ \t]*(?:#|%:)|\?\?=",
                        re.M)
_CONTINUATION = re.compile(r"\\[ \t]*(?:\n|$)")  # a line splice would join template lines
# Names a hole value may not use: host-only, allocation, process and file functions (a hole
# is a piece of kernel arithmetic; printf too, whose output nothing verifies), and the
# CUDA runtime API (cudaMalloc, cudaMemcpy, ...). Member names (p.free, p->open) are fine.
_HOST_WORDS = (
    "malloc calloc realloc free aligned_alloc posix_memalign memalign valloc new delete "
    "system popen pclose fork vfork execl execlp execle execv execvp execve exit _exit "
    "quick_exit abort atexit getenv setenv putenv fopen freopen fclose fread fwrite fflush "
    "fprintf printf sprintf snprintf vprintf puts fputs putchar fputc fgets fgetc fscanf "
    "scanf sscanf remove rename unlink tmpfile mmap munmap dlopen dlsym kill"
)
_HOST_NAMES = frozenset(_HOST_WORDS.split())
_NAME_SCAN = re.compile(r"""//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'
    | (?P<member>(?:\.|->)\s*)?(?P<name>[A-Za-z_]\w*)""", re.X)


def _host_name(text: str) -> str | None:
    """The first host-only name a value uses (outside comments and literals), if any."""
    for m in _NAME_SCAN.finditer(text):
        name = m.group("name")
        if name and not m.group("member") and (name in _HOST_NAMES
                                               or re.fullmatch(r"cuda[A-Z]\w*", name)):
            return name
    return None


def _hole_value_problem(decl: HoleDecl, text: str) -> str:
    """Why a value is not in a hole's domain ('' when it is)."""
    shown = json.dumps(text)
    if decl.type == "int":
        if not re.fullmatch(r"[+-]?[0-9]+", text):
            return f"{shown} is not an integer"
        v = int(text, 10)
        if decl.values is not None and v not in decl.values:
            return f"{v} is not in {decl.domain_text()}"
        if decl.lo is not None and decl.hi is not None and not decl.lo <= v <= decl.hi:
            return f"{v} is not in {decl.domain_text()}"
        return ""
    if decl.type == "enum":
        if decl.values is not None and text not in [str(v) for v in decl.values]:
            return f"{shown} is not one of {decl.domain_text()}"
        return ""
    host = _host_name(text) if decl.type in ("ident", "expr", "stmts") else None
    if decl.type == "ident":
        if not _IDENT_RE.fullmatch(text):
            return f"{shown} is not a C identifier"
        if text in _KEYWORDS:
            return f"{shown} is a keyword, not a free identifier"
        return f"{shown} is a host function's name, which a hole value may not use" \
            if host else ""
    if not text:
        return f"an empty {decl.type} is not allowed"
    bad = _FORBIDDEN.search(text)
    if bad:
        what = "inline asm" if "asm" in bad.group(0) else "a pragma operator" \
            if "ragma" in bad.group(0) else "a preprocessor line"
        return f"{shown} contains {what}, which a hole value may not"
    if _CONTINUATION.search(text):
        return f"{shown} contains a line continuation (a backslash at the end of a line)"
    if host:
        return f"{shown} uses {host}, a host or allocation function, which a hole value may not"
    if decl.type == "expr":
        return "" if _is_expression(text) else f"{shown} does not parse as one CUDA expression"
    return "" if _is_statements(text) else f"{shown} does not parse as CUDA statements"


def _is_expression(text: str) -> bool:
    """Exactly one expression: the wrapper's parenthesis must hold all of it (so a value
    such as ``1); evil(); (0`` is refused, not spliced in)."""
    from klc.frontend import parser

    prefix, suffix = _HOLE_EXPR_WRAP
    src = (prefix + text + suffix).encode()
    root = parser().parse(src).root_node
    if root.has_error:
        return False
    fns = [c for c in root.named_children if c.type != "comment"]
    body = fns[0].child_by_field_id(F_BODY) if len(fns) == 1 else None
    stmts = [c for c in body.named_children if c.type != "comment"] if body else []
    if len(stmts) != 1 or stmts[0].type != "declaration":
        return False
    decl = stmts[0].child_by_field_id(F_DECLARATOR)
    value = decl.child_by_field_id(F_VALUE) if decl is not None else None
    start = len(prefix.encode()) - 1
    if value is None or value.type != "parenthesized_expression" or value.start_byte != start \
            or value.end_byte != start + len(text.encode()) + 2:
        return False
    # a top-level comma would put two arguments where the template has one: f(?e) -> f(a, b)
    inner = [c for c in value.named_children if c.type != "comment"]
    return len(inner) == 1 and inner[0].type != "comma_expression"


def _is_statements(text: str) -> bool:
    """Statements that stay inside the one function body they are put in."""
    from klc.frontend import parser

    prefix, suffix = _HOLE_STMTS_WRAP
    src = (prefix + text + suffix).encode()
    root = parser().parse(src).root_node
    if root.has_error:
        return False
    fns = [c for c in root.named_children if c.type != "comment"]
    if len(fns) != 1 or fns[0].type != "function_definition":
        return False
    body = fns[0].child_by_field_id(F_BODY)
    return body is not None and body.end_byte == len(src) - 1


# --------------------------------------------------------------------------------------
# Step 2: spec -> Rule


class _Errors:
    """Collects a file's errors, so that ``klc check`` reports them all at once."""

    def __init__(self, path: str):
        self.path = path
        self.items: list[tuple[int, int, str]] = []

    def add(self, line: int, col: int, message: str) -> None:
        self.items.append((line, col, message))

    def messages(self) -> list[str]:
        return [f"{where(self.path, ln, c)}: {m}" for ln, c, m in sorted(set(self.items))]


def compile_spec(spec: RuleSpec, errors: _Errors | None = None) -> Rule | None:
    """Step 2: check a spec and build its Rule. Problems go to ``errors`` (then None is
    returned); without ``errors``, the first problems raise RuleError."""
    own = errors is None
    errs = errors if errors is not None else _Errors(spec.path)
    before = len(errs.items)
    rule = _compile(spec, errs)
    if len(errs.items) > before:
        if own:
            raise RuleError(errs.messages())
        return None
    return rule


def _compile(spec: RuleSpec, errs: _Errors) -> Rule | None:
    rule_where = f"rule {spec.name}"
    single: dict[str, FieldSpec] = {}
    for f in spec.fields:
        if f.name in SINGLE_FIELDS:
            if f.name in single:
                first = single[f.name]
                errs.add(f.line, f.col, f"{rule_where}: duplicate field `{f.name}` (first at "
                         f"line {first.line}:{first.col})")
                continue
            single[f.name] = f
    for required in ("kind", "anchor"):
        if required not in single:
            errs.add(spec.line, spec.col, f"{rule_where}: missing `{required}`")
    edit_specs = [f.value for f in spec.fields if f.name == "rewrite"]
    if not edit_specs:
        errs.add(spec.line, spec.col, f"{rule_where}: missing `rewrite` (at least one edit)")

    kind = ""
    if "kind" in single:
        tok = single["kind"].value
        kind = str(tok)
        if kind not in KINDS:
            errs.add(tok.line, tok.column, f"unknown kind {kind!r}; a rule is one of: "
                     f"{', '.join(KINDS)}")
    context: tuple[str, ...] = ("any",)
    if "context" in single:
        toks = single["context"].value
        context = tuple(str(t) for t in toks)
        for t in toks:
            if str(t) not in CONTEXTS:
                close = difflib.get_close_matches(str(t), CONTEXTS, n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                errs.add(t.line, t.column, f"unknown context {str(t)!r}{hint}; contexts are: "
                         f"{', '.join(CONTEXTS)}")
        if "global" in context and "device" in context:
            errs.add(toks[0].line, toks[0].column, "context: a match cannot be inside both a "
                     "__global__ and a __device__ function")
        if len(set(context)) != len(context):
            errs.add(toks[0].line, toks[0].column, "context: a context is listed twice")

    holes = _holes([f.value for f in spec.fields if f.name == "hole"], errs)
    used_holes: set[str] = set()

    def use_hole(name: str, line: int, col: int, what: str) -> None:
        used_holes.add(name)
        if name not in holes:
            hint = " (a conditional needs a space after `?`: `c ? a : b`)" \
                if what.startswith("rewrite") else ""
            errs.add(line, col, f"hole ?{name} is used in {what} but not declared "
                     f"(declare it: `hole {name}: ...`){hint}")

    metavars: set[str] = set()
    sequences: set[str] = set()
    anchor = CodeBlock("", spec.line, spec.col, ())
    if "anchor" in single:
        anchor = single["anchor"].value
        if not anchor.text.strip():
            errs.add(anchor.line, anchor.col, "the anchor is empty")
        else:
            _check_anchor(anchor, holes, metavars, sequences, errs)

    def use_metavar(ref_kind: str, name: str, line: int, col: int, what: str) -> None:
        shown = ("$$$" if ref_kind == "sequence" else "$") + name
        if name == "_":
            errs.add(line, col, f"{shown} in {what}: the wildcard binds nothing, so it "
                     "cannot be used here")
        elif name not in metavars:
            bound = ", ".join("$" + ("$$" if m in sequences else "") + m
                              for m in sorted(metavars)) or "none"
            errs.add(line, col, f"{shown} is used in {what} but the anchor never binds it "
                     f"(the anchor binds: {bound})")
        elif (ref_kind == "sequence") != (name in sequences):
            bound_as = "$$$" + name if name in sequences else "$" + name
            errs.add(line, col, f"{shown} is used in {what} but the anchor binds {bound_as}")

    edits = [_compile_within(e, spec, errs, holes, metavars, sequences, use_hole,
                             use_metavar, k)
             if e.kind == "within" else _compile_edit(e, errs, use_hole, use_metavar)
             for k, e in enumerate(edit_specs, start=1)]
    replaces = [e for e in edit_specs if e.kind == "replace"]
    for extra in replaces[1:]:
        errs.add(extra.line, extra.col, "only one `rewrite replace` per rule (the anchor is "
                 "replaced once)")

    guard = None
    if "guard" in single:
        guard = single["guard"].value
        for call in calls(guard):
            for line, col, message in check_call(call):
                errs.add(line, col, message)
            for arg in call.args:
                if arg.kind in ("metavar", "sequence"):
                    use_metavar(arg.kind, str(arg.value), arg.line, arg.col, "the guard")
                elif arg.kind == "hole":
                    use_hole(str(arg.value), arg.line, arg.col, "the guard")

    for name, decl in holes.items():
        if name not in used_holes:
            errs.add(decl.line, decl.col, f"hole ?{name} is declared but never used in a "
                     "rewrite or the guard")
    for e, ed in zip(edit_specs, edits, strict=True):
        if ed is not None and ed.kind == "launch" and isinstance(ed.factor, str):
            decl = holes.get(ed.factor[1:])
            if decl is not None and decl.type != "int":
                errs.add(*e.factor_pos, f"the launch factor {ed.factor} must be an int hole, "
                         f"not {decl.type}")

    metavar_kinds = _metavar_kinds([f for f in spec.fields if f.name == "metavar"], metavars,
                                   sequences, errs)
    card = _card(single["card"].value, errs) if "card" in single else Card()
    description = single["description"].value.value if "description" in single else ""
    inverse = _inverse(single["inverse"], kind, metavars, sequences, errs) \
        if "inverse" in single else None
    return Rule(
        name=spec.name, kind=kind, description=description, path=spec.path, line=spec.line,
        col=spec.col, anchor=anchor.text,
        anchor_line=anchor.starts[0][0] if anchor.starts else anchor.line,
        anchor_col=anchor.starts[0][1] if anchor.starts else anchor.col,
        context=context, guard=guard, edits=tuple(e for e in edits if e is not None),
        holes=holes, card=card, metavars=frozenset(metavars),
        sequence_metavars=frozenset(sequences), inverse=inverse, metavar_kinds=metavar_kinds,
    )


def _metavar_kinds(fields: list[FieldSpec], metavars: set[str], sequences: set[str],
                   errs: Any) -> tuple[tuple[str, str], ...]:
    """``metavar $X: KIND, ...`` lines: a metavariable the anchor binds as one node, known
    kinds, one line per metavariable; a (name, kind) pair per kind, in the order written."""
    from klc.match import METAVAR_KINDS

    found: dict[str, str] = {}
    pairs: list[tuple[str, str]] = []
    for f in fields:
        var_tok, kind_toks = f.value
        shown = str(var_tok)
        name = shown.lstrip("$")
        for kind_tok in kind_toks:
            kind = str(kind_tok)
            if kind not in METAVAR_KINDS:
                close = difflib.get_close_matches(kind, METAVAR_KINDS, n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                errs.add(kind_tok.line, kind_tok.column, f"unknown metavariable kind {kind!r}"
                         f"{hint}; the kinds are: {', '.join(METAVAR_KINDS)}")
        kinds = [str(k) for k in kind_toks]
        if shown.startswith("$$$"):
            errs.add(var_tok.line, var_tok.column, f"metavar {shown}: a kind constrains a "
                     f"metavariable that binds one node (${name}), not a run")
        elif name == "_" or name not in metavars or name in sequences:
            bound = ", ".join("$" + m for m in sorted(metavars - sequences)) or "none"
            errs.add(var_tok.line, var_tok.column, f"metavar {shown}: the anchor binds no "
                     f"{shown} (it binds: {bound})")
        elif name in found:
            errs.add(var_tok.line, var_tok.column, f"metavar {shown}: its kinds are given twice "
                     f"(write them on one line: metavar {shown}: A, B)")
        elif all(k in METAVAR_KINDS for k in kinds):
            nodes = [k for k in kinds if METAVAR_KINDS[k] is not None]
            if len(set(kinds)) < len(kinds):
                errs.add(var_tok.line, var_tok.column, f"metavar {shown}: a kind is repeated")
            elif len(nodes) > 1 and not frozenset.intersection(*(METAVAR_KINDS[k] for k in nodes)):
                errs.add(var_tok.line, var_tok.column, f"metavar {shown}: no code is both "
                         f"{' and '.join(nodes)}")
            elif {"pointer", "scalar"} <= set(kinds):
                errs.add(var_tok.line, var_tok.column, f"metavar {shown}: no code is both a "
                         "pointer and a scalar")
            else:
                found[name] = kind
                pairs.extend((name, k) for k in kinds)
    return tuple(sorted(pairs, key=lambda p: p[0]))


def _inverse(f: FieldSpec, kind: str, metavars: set[str], sequences: set[str],
             errs: _Errors) -> Inverse:
    """Check an inverse block: only in a simplification, each item at most once (holes
    aside), a C-identifier-like name, a guard of known predicates over the anchor's
    metavariables (klc learn checks the skill it builds again, as a whole rule)."""
    if kind and kind != "simplification":
        errs.add(f.line, f.col, "inverse: only a simplification has an inverse block (a "
                 "skill is the inverse)")
    seen: dict[str, tuple[int, int]] = {}
    name, description, guard, family = "", "", None, ""
    for item, value, line, col in f.value:
        if item != "hole":
            if item in seen:
                errs.add(line, col, f"inverse: duplicate `{item}` (first at line "
                         f"{seen[item][0]}:{seen[item][1]})")
                continue
            seen[item] = (line, col)
        if item == "name":
            name = str(value)
        elif item == "family":
            family = str(value)
        elif item == "description":
            description = value.value
        elif item == "guard":
            guard = value
            for call in calls(guard):
                for ln, c, message in check_call(call):
                    errs.add(ln, c, message)
                for arg in call.args:
                    if arg.kind in ("metavar", "sequence") and str(arg.value) != "_" \
                            and str(arg.value) not in metavars:
                        errs.add(arg.line, arg.col, f"inverse guard: ${arg.value} is not "
                                 "bound by the anchor")
    holes = _holes([v for item, v, _, _ in f.value if item == "hole"], errs)
    return Inverse(name, description, guard, holes, family, f.line, f.col)


def _check_anchor(anchor: CodeBlock, holes: dict[str, HoleDecl], metavars: set[str],
                  sequences: set[str], errs: _Errors) -> None:
    for ref in code_refs(anchor.text):
        line, col = anchor.position(ref.start)
        if ref.kind == "hole":
            if ref.name in holes:
                errs.add(line, col, f"hole ?{ref.name} cannot be used in the anchor (holes "
                         "belong to rewrites and guards)")
            continue
        if not ref.name[0].isupper() and ref.name != "_":
            errs.add(line, col, f"metavariable ${ref.name}: metavariable names are upper case "
                     f"(${ref.name.upper()})")
            continue
        if ref.name == "_":
            continue
        if ref.kind == "sequence":
            if ref.name in metavars and ref.name not in sequences:
                errs.add(line, col, f"$$${ref.name} is also used as ${ref.name} in the anchor")
            sequences.add(ref.name)
        elif ref.name in sequences:
            errs.add(line, col, f"${ref.name} is also used as $$${ref.name} in the anchor")
        metavars.add(ref.name)
    text = anchor.text
    for ref in reversed([r for r in code_refs(text) if r.kind == "hole" and r.name in holes]):
        text = text[:ref.start] + "$" + text[ref.start + 1:]  # already reported above
    problem = parse_problem(text)
    if problem is not None:
        line, col = anchor.position(problem[0])
        errs.add(line, col, f"the anchor {problem[1]}")
        return
    # the matcher compiles anchors itself: what it refuses is refused here, at load time
    from klc.match import compile_pattern

    try:
        compile_pattern(text, where(errs.path, anchor.line, anchor.col))
    except KlcError as e:
        message = str(e).split(": ", 1)[-1]
        errs.add(*anchor.position(0), f"the anchor cannot be used as a pattern: {message}")


def _compile_within(e: EditSpec, spec: RuleSpec, errs: _Errors, holes: dict[str, HoleDecl],
                    outer: set[str], outer_seqs: set[str], use_hole: Any, use_metavar: Any,
                    k: int) -> Edit | None:
    """A ``rewrite within $X { anchor, guard, replace, inverse guard }`` block: a sub-rule
    whose anchor is matched inside the code $X bound. Its metavariables are its own, plus the
    rule's (a name both bind must bind equal code); its replace and guards may use both."""
    assert e.target is not None
    what = f"rewrite within {e.target}"
    kind = "sequence" if e.target.startswith("$$$") else "metavar"
    use_metavar(kind, e.target.lstrip("$"), *e.target_pos, what)
    seen: dict[str, tuple[int, int]] = {}
    got: dict[str, Any] = {}
    for item, value, line, col in e.items:
        if item in seen:
            errs.add(line, col, f"{what}: duplicate `{item.replace('_', ' ')}` (first at line "
                     f"{seen[item][0]}:{seen[item][1]})")
            continue
        seen[item] = (line, col)
        got[item] = value
    for required in ("anchor", "replace"):
        if required not in got:
            errs.add(e.line, e.col, f"{what}: missing `{required}`")
    if "anchor" not in got or "replace" not in got:
        return None
    anchor: CodeBlock = got["anchor"]
    mine: set[str] = set()
    seqs: set[str] = set()
    if not anchor.text.strip():
        errs.add(anchor.line, anchor.col, f"{what}: the anchor is empty")
        return None
    _check_anchor(anchor, holes, mine, seqs, errs)
    for name in sorted(mine & outer):
        if (name in seqs) != (name in outer_seqs):
            errs.add(anchor.line, anchor.col, f"{what}: the anchor binds {name} as "
                     f"{'$$$' if name in seqs else '$'}{name}, the rule's anchor as "
                     f"{'$$$' if name in outer_seqs else '$'}{name}")
    names = mine | outer
    sequences = seqs | (outer_seqs - mine)

    def use(ref_kind: str, name: str, line: int, col: int, where_: str) -> None:
        shown = ("$$$" if ref_kind == "sequence" else "$") + name
        if name == "_":
            errs.add(line, col, f"{shown} in {where_}: the wildcard binds nothing")
        elif name not in names:
            errs.add(line, col, f"{shown} is used in {where_} but neither its anchor nor the "
                     "rule's binds it")
        elif (ref_kind == "sequence") != (name in sequences):
            errs.add(line, col, f"{shown} is used in {where_} but is bound as "
                     f"{'$$$' if name in sequences else '$'}{name}")

    replace: CodeBlock = got["replace"]
    sub_edit = _compile_edit(EditSpec("replace", code=replace, line=e.line, col=e.col), errs,
                             use_hole, use)
    guards: dict[str, GuardExpr | None] = {}
    for item in ("guard", "inverse_guard"):
        g = got.get(item)
        guards[item] = g
        if g is None:
            continue
        for call in calls(g):
            for line, col, message in check_call(call):
                errs.add(line, col, message)
            for arg in call.args:
                if arg.kind in ("metavar", "sequence"):
                    use(arg.kind, str(arg.value), arg.line, arg.col,
                        f"the {item.replace('_', ' ')} of {what}")
                elif arg.kind == "hole":
                    use_hole(str(arg.value), arg.line, arg.col, f"the guard of {what}")
    if sub_edit is None:
        return None
    inverse_guard = guards["inverse_guard"]
    sub = Rule(
        name=f"{spec.name}.within{k}", kind="within", description="", path=spec.path,
        line=e.line, col=e.col, anchor=anchor.text,
        anchor_line=anchor.starts[0][0] if anchor.starts else anchor.line,
        anchor_col=anchor.starts[0][1] if anchor.starts else anchor.col,
        context=("any",), guard=guards["guard"], edits=(sub_edit,), holes=holes, card=Card(),
        metavars=frozenset(names), sequence_metavars=frozenset(sequences),
        inverse=Inverse(guard=inverse_guard) if inverse_guard is not None else None)
    return Edit("within", target=e.target.lstrip("$"), sub=sub, line=e.line, col=e.col)


def _compile_edit(e: EditSpec, errs: _Errors, use_hole: Any, use_metavar: Any) -> Edit | None:
    what = f"rewrite {e.kind}"
    if e.code is not None:
        if not e.code.text.strip():
            errs.add(e.code.line, e.code.col, f"{what}: the code block is empty")
            return None
        for ref in code_refs(e.code.text):
            line, col = e.code.position(ref.start)
            if ref.kind == "hole":
                use_hole(ref.name, line, col, what)
            else:
                use_metavar(ref.kind, ref.name, line, col, what)
        problem = parse_problem(_for_parsing(e.code.text), template=True)
        if problem is not None:
            line, col = e.code.position(problem[0])
            errs.add(line, col, f"{what}: the template {problem[1]}")
        return Edit(e.kind, template=e.code.text, line=e.line, col=e.col)
    if e.kind in ("add_qualifier", "remove_qualifier"):
        assert e.target is not None and e.value is not None
        kind = "sequence" if e.target.startswith("$$$") else "metavar"
        use_metavar(kind, e.target.lstrip("$"), *e.target_pos, what)
        if e.value.value not in QUALIFIERS:
            errs.add(e.value.line, e.value.col, f"{what}: unknown qualifier "
                     f"{json.dumps(e.value.value)}; qualifiers are: {', '.join(QUALIFIERS)}")
        return Edit(e.kind, target=e.target.lstrip("$"), value=e.value.value, line=e.line,
                    col=e.col)
    if e.kind in ("add_attribute", "remove_attribute"):
        assert e.value is not None
        value = e.value.value
        for ref in code_refs(value):
            line, col = e.value.position(ref.start)
            if ref.kind == "hole":
                use_hole(ref.name, line, col, what)
            else:
                use_metavar(ref.kind, ref.name, line, col, what)
        if e.kind == "remove_attribute":
            if not _IDENT_RE.fullmatch(value):
                errs.add(e.value.line, e.value.col, f"{what}: give the attribute's name, "
                         f"such as \"__launch_bounds__\", not {json.dumps(value)}")
        elif not value.strip():
            errs.add(e.value.line, e.value.col, f"{what}: the attribute is empty")
        else:
            wrapped = parse_problem(_for_parsing(value), (("__global__ void ", " __k() {}\n"),))
            if wrapped is not None:
                line, col = e.value.position(wrapped[0])
                errs.add(line, col, f"{what}: {json.dumps(value)} is not a function "
                         f"attribute: it {wrapped[1]}")
        return Edit(e.kind, value=value, line=e.line, col=e.col)
    assert e.dim is not None and e.op is not None and e.factor is not None
    dim, _, axis = e.dim.partition(".")
    if dim not in ("grid", "block") or axis not in ("x", "y", "z"):
        errs.add(e.line, e.col + len("rewrite launch "), f"{what}: {e.dim!r} is not one of "
                 "grid.x, grid.y, grid.z, block.x, block.y, block.z")
    factor: int | str
    if e.factor.startswith("?"):
        factor = e.factor
        use_hole(e.factor[1:], *e.factor_pos, what)
    else:
        factor = int(e.factor)
        if factor < 1:
            errs.add(*e.factor_pos, f"{what}: the factor must be a positive integer, "
                     f"not {factor}")
    return Edit("launch", dim=dim, axis=axis, op=e.op[0], factor=factor, line=e.line,
                col=e.col)


def _holes(specs: list[HoleSpec], errs: _Errors) -> dict[str, HoleDecl]:
    holes: dict[str, HoleDecl] = {}
    for h in specs:
        where_ = f"hole ?{h.name}"
        if h.name in holes:
            errs.add(h.line, h.col, f"{where_} is declared twice (first at line "
                     f"{holes[h.name].line}:{holes[h.name].col})")
            continue
        if h.type not in HOLE_TYPES:
            close = difflib.get_close_matches(h.type, HOLE_TYPES, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            errs.add(*h.type_pos, f"{where_}: unknown type {h.type!r}{hint}; hole types are: "
                     f"{', '.join(HOLE_TYPES)}")
            continue
        values: tuple[int | str, ...] | None = None
        lo = hi = None
        ok = True
        if h.type == "int":
            if h.domain is None:
                errs.add(*h.type_pos, f"{where_}: an int hole needs a domain: `int in {{2, 4, 8}}`"
                         " or `int in 1..8`")
                ok = False
            elif h.domain == "enum":
                errs.add(*h.type_pos, f"{where_}: write an int domain with `in`: "
                         "`int in {2, 4, 8}`")
                ok = False
            else:
                bad = [v for v in h.values if v.type != "INT"]
                for v in bad:
                    errs.add(v.line, v.column, f"{where_}: {v} is not an integer")
                ok = not bad
                if ok and h.domain == "set":
                    values = tuple(int(str(v)) for v in h.values)
                    if len(set(values)) != len(values):
                        errs.add(h.line, h.col, f"{where_}: a value is listed twice")
                elif ok:
                    lo, hi = int(str(h.values[0])), int(str(h.values[1]))
                    if lo > hi:
                        errs.add(h.values[0].line, h.values[0].column,
                                 f"{where_}: the range {lo}..{hi} is empty")
                        ok = False
        elif h.type == "enum":
            if h.domain is None:
                errs.add(*h.type_pos, f"{where_}: an enum hole needs its values: "
                         "`enum {warp, block}`")
                ok = False
            elif h.domain != "enum":
                errs.add(*h.type_pos, f"{where_}: write enum values without `in`: "
                         "`enum {warp, block}`")
                ok = False
            else:
                values = tuple(str(v) for v in h.values)
                if len(set(values)) != len(values):
                    errs.add(h.line, h.col, f"{where_}: a value is listed twice")
        elif h.domain is not None:
            errs.add(*h.type_pos, f"{where_}: a {h.type} hole takes no domain (its values "
                     f"are any C {'identifier' if h.type == 'ident' else h.type})")
        default: int | str | None = None
        decl = HoleDecl(h.name, h.type, values, lo, hi, None, h.line, h.col)
        if h.default is not None and ok:
            raw = str(h.default)
            problem = _hole_value_problem(decl, raw.strip())
            if problem:
                errs.add(h.default.line, h.default.column, f"{where_}: the default {problem}")
            else:
                default = int(raw) if h.type == "int" else raw.strip()
        holes[h.name] = HoleDecl(h.name, h.type, values, lo, hi, default, h.line, h.col)
    return holes


def _card(items: tuple[tuple[str, Text, int, int], ...], errs: _Errors) -> Card:
    seen: dict[str, tuple[int, int]] = {}
    single: dict[str, str] = {}
    repeated: dict[str, list[str]] = {k: [] for k in REPEATED_CARD_FIELDS}
    for key, text, line, col in items:
        if key == "verdict" and text.value not in VERDICTS:
            errs.add(line, col, f"card: verdict {json.dumps(text.value)} is not one of "
                     f"{', '.join(VERDICTS)}")
        if key in REPEATED_CARD_FIELDS:
            repeated[key].append(text.value)
            continue
        if key in seen:
            errs.add(line, col, f"card: duplicate `{key}` (first at line {seen[key][0]}:"
                     f"{seen[key][1]}); only effect, pitfalls and provenance may repeat")
            continue
        seen[key] = (line, col)
        single[key] = text.value
    return Card(single.get("intent", ""), single.get("where", ""),
                single.get("conditions", ""), tuple(repeated["effect"]),
                tuple(repeated["pitfalls"]), tuple(repeated["provenance"]),
                single.get("verdict", ""), single.get("precision", ""))


# --------------------------------------------------------------------------------------
# Loading


MAX_RULE_NESTING = 200  # parentheses, brackets and braces open at once in a rule file


def load_rules_text(text: str, path: str) -> list[Rule]:
    """Every rule of a rule file's text; RuleError lists all problems with file:line:col.

    The one place rule text is read: whatever the text holds, the outcome is the rules or a
    KlcError naming the file (never another exception); nesting is bounded first."""
    _check_nesting(text, path)
    try:
        return _load_rules_text(text, path)
    except KlcError:
        raise
    except _BadText as e:
        raise KlcError(f"{where(path, e.line, e.col)}: {e.msg}") from None
    except RecursionError:
        raise KlcError(f"{path}: nested too deeply to compile (a guard or an anchor); split "
                       "it") from None


def _check_nesting(text: str, path: str) -> None:
    """Refuse text nested deeper than MAX_RULE_NESTING (the parsers recurse on nesting)."""
    if sum(text.count(c) for c in "([{") <= MAX_RULE_NESTING:
        return
    depth = line = 1
    col = 0
    for ch in text:
        col += 1
        if ch in "([{":
            depth += 1
            if depth > MAX_RULE_NESTING:
                raise KlcError(f"{where(path, line, col)}: nested more than "
                               f"{MAX_RULE_NESTING} deep")
        elif ch in ")]}":
            depth -= 1
        elif ch == "\n":
            line, col = line + 1, 0


def _load_rules_text(text: str, path: str) -> list[Rule]:
    specs = parse_specs(text, path)
    errs = _Errors(path)
    seen: dict[str, RuleSpec] = {}
    rules: list[Rule] = []
    for spec in specs:
        if spec.name in seen:
            first = seen[spec.name]
            errs.add(spec.line, spec.col, f"duplicate rule name {spec.name!r} (first defined "
                     f"at line {first.line}:{first.col})")
        seen.setdefault(spec.name, spec)
        rule = compile_spec(spec, errs)
        if rule is not None:
            rules.append(rule)
    if not specs:
        errs.add(1, 1, "no rule in this file")
    if errs.items:
        raise RuleError(errs.messages())
    return rules


def load_rules(path: str | Path) -> list[Rule]:
    """The rules of one ``.rule`` file."""
    from klc.fsutil import read_input

    data = read_input(path, "rule file")  # regular files only, bounded, never blocks
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise KlcError(f"{where(str(path), line, col)}: not UTF-8 text") from None
    return load_rules_text(text, str(path))


def load_rule_dir(directory: str | Path) -> list[Rule]:
    """The rules of every ``*.rule`` file of a folder, files in name order; a rule name used
    in two files is an error. Problems of all files are reported together."""
    d = Path(directory)
    if not d.is_dir():
        raise KlcError(f"{directory}: no such rule folder")
    rules: list[Rule] = []
    errors: list[str] = []
    seen: dict[str, Rule] = {}
    for path in sorted(d.glob("*.rule")):
        try:
            loaded = load_rules(path)
        except RuleError as e:
            errors.extend(e.errors)
            continue
        except KlcError as e:
            errors.append(str(e))
            continue
        for r in loaded:
            if r.name in seen:
                errors.append(f"{where(r.path, r.line, r.col)}: duplicate rule name "
                              f"{r.name!r} (first defined at {seen[r.name].location})")
                continue
            seen[r.name] = r
            rules.append(r)
    if errors:
        raise RuleError(errors)
    return rules


def check_rule_paths(paths: list[str | Path]) -> tuple[list[Rule], list[str]]:
    """What ``klc check`` runs: load every file given (a folder: its ``*.rule`` files, in
    name order) without stopping at a bad one, and refuse a rule name defined twice across
    all of them. Returns the valid rules and every error, each ``file:line:col: message``."""
    files: list[Path] = []
    errors: list[str] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(path.glob("*.rule"))
            if not found:
                errors.append(f"{p}: no .rule files in this folder")
            files += found
        else:
            files.append(path)
    rules: list[Rule] = []
    seen: dict[str, Rule] = {}
    for path in files:
        try:
            loaded = load_rules(path)
        except RuleError as e:
            errors.extend(e.errors)
            continue
        except KlcError as e:
            errors.append(str(e))
            continue
        for r in loaded:
            if r.name in seen:
                errors.append(f"{where(r.path, r.line, r.col)}: duplicate rule name "
                              f"{r.name!r} (first defined at {seen[r.name].location})")
                continue
            seen[r.name] = r
            rules.append(r)
    return rules, errors


# --------------------------------------------------------------------------------------
# Printing


def _string(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _bare_or_string(v: int | str) -> str:
    text = str(v)
    if isinstance(v, int) or _IDENT_RE.fullmatch(text) or re.fullmatch(r"-?[0-9]+", text):
        return text
    return _string(text)


def _block(keyword: str, code: str) -> list[str]:
    return [f"  {keyword}: ```"] + [f"    {ln}" if ln else "" for ln in code.split("\n")] + \
        ["  ```"]


def rule_to_text(rule: Rule) -> str:
    """The rule in the rule language; ``load_rules_text`` of it gives an equal rule."""
    out = [f"rule {rule.name} {{", f"  kind: {rule.kind}"]
    if rule.description:
        out.append(f"  description: {_string(rule.description)}")
    out.append(f"  context: {', '.join(rule.context)}")
    out += _block("anchor", rule.anchor)
    kinds_of: dict[str, list[str]] = {}
    for name, kind in rule.metavar_kinds:
        kinds_of.setdefault(name, []).append(kind)
    out += [f"  metavar ${name}: {', '.join(kinds)}" for name, kinds in kinds_of.items()]
    if rule.guard is not None:
        out.append(f"  guard: {guard_text(rule.guard)}")
    for e in rule.edits:
        if e.kind in ("replace", "insert_body_start", "remove_statement"):
            out += _block(f"rewrite {e.kind}", e.template or "")
        elif e.kind in ("add_qualifier", "remove_qualifier"):
            out.append(f"  rewrite {e.kind} ${e.target}: {_string(e.value or '')}")
        elif e.kind in ("add_attribute", "remove_attribute"):
            out.append(f"  rewrite {e.kind}: {_string(e.value or '')}")
        elif e.kind == "within" and e.sub is not None:
            out += _within_lines(rule, e)
        else:
            out.append(f"  rewrite launch {e.dim}.{e.axis} {e.op}= {e.factor}")
    out += [f"  {ln}" for h in rule.holes.values() for ln in _hole_lines(h)]
    c = rule.card
    items = [(k, v) for k, v in (("intent", c.intent), ("where", c.where),
                                 ("conditions", c.conditions), ("precision", c.precision)) if v]
    items += [("effect", v) for v in c.effect] + [("pitfalls", v) for v in c.pitfalls] + \
        [("provenance", v) for v in c.provenance]
    if c.verdict:
        items.append(("verdict", c.verdict))
    if items:
        out.append("  card {")
        out += [f"    {k}: {_string(v)}" for k, v in items]
        out.append("  }")
    inv = rule.inverse
    if inv is not None:
        out.append("  inverse {")
        if inv.name:
            out.append(f"    name: {inv.name}")
        if inv.family:
            out.append(f"    family: {inv.family}")
        if inv.description:
            out.append(f"    description: {_string(inv.description)}")
        if inv.guard is not None:
            out.append(f"    guard: {guard_text(inv.guard)}")
        out += [f"    {ln}" for h in inv.holes.values() for ln in _hole_lines(h)]
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


def _within_lines(rule: Rule, e: Edit) -> list[str]:
    sub = e.sub
    assert sub is not None
    mark = "$$$" if e.target in rule.sequence_metavars else "$"
    out = [f"  rewrite within {mark}{e.target} {{"]
    out += [("  " + ln) if ln else "" for ln in _block("anchor", sub.anchor)]
    if sub.guard is not None:
        out.append(f"    guard: {guard_text(sub.guard)}")
    out += [("  " + ln) if ln else "" for ln in _block("replace", sub.edits[0].template or "")]
    if sub.inverse is not None and sub.inverse.guard is not None:
        out.append(f"    inverse guard: {guard_text(sub.inverse.guard)}")
    out.append("  }")
    return out


def _hole_lines(h: HoleDecl) -> list[str]:
    line = f"hole {h.name}: {h.type}"
    if h.type == "int" and h.values is not None:
        line += " in {" + ", ".join(str(v) for v in h.values) + "}"
    elif h.type == "int":
        line += f" in {h.lo}..{h.hi}"
    elif h.type == "enum" and h.values is not None:
        line += " {" + ", ".join(_bare_or_string(v) for v in h.values) + "}"
    if h.default is not None:
        default = _string(str(h.default)) if h.type in ("expr", "stmts") \
            else _bare_or_string(h.default)
        line += f" default {default}"
    return [line]
