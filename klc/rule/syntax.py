"""The rule language's syntax: ``.rule`` text -> lark tree -> spec dataclasses.

Step 1 of loading (``klc.rule.compile`` is step 2): what the file says, with every element's
line:column, nothing checked beyond the grammar (``grammar/rule.lark``, the one definition of
the syntax, installed as ``klc.grammar``). A syntax error names what was expected in words.
"""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klc.errors import KlcError, where
from klc.rule.guard import GuardAnd, GuardArg, GuardCall, GuardExpr, GuardNot, GuardOr
from klc.rule.model import CARD_FIELDS
from klc.rule.paths import packaged

if TYPE_CHECKING:
    from lark import Lark, Token, Tree
    from lark.exceptions import UnexpectedInput

# lark is imported where rule text is parsed (a command that reads the compiled library from
# its cache, klc.rule.cache, parses none and never imports it)


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
    """One ``rewrite`` clause as read: its keyword and the grammar's children, each made
    plain: a code block is a ``CodeBlock``, a string a ``Text``, a guard a ``GuardExpr``, a
    block item (``within``) a tuple (item, value, line, col); other tokens stay lark
    ``Token``s (with their line and column). Each kind's compile (klc/edits) reads them."""

    kind: str
    args: tuple[Any, ...]
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


@dataclass(frozen=True)
class GuardDefSpec:
    """``define guard NAME($P, ...): GUARD`` as written."""

    name: str
    params: tuple[GuardArg, ...]
    body: GuardExpr
    path: str
    line: int
    col: int


@dataclass(frozen=True)
class UseSpec:
    """``use "FILE"``: the named guards of another file."""

    target: str
    path: str
    line: int
    col: int


@dataclass(frozen=True)
class FileSpec:
    """What a rule file holds, as written: its rules, named guards and uses."""

    rules: tuple[RuleSpec, ...]
    defines: tuple[GuardDefSpec, ...] = ()
    uses: tuple[UseSpec, ...] = ()


@cache
def grammar() -> Lark:
    """The lark parser of the rule language (built once per process)."""
    from lark import Lark

    text = (packaged("grammar") / "rule.lark").read_text(encoding="utf-8")
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
    "LAUNCH_OP": '"*=" or "/="', "SWAP_OP": '"<->"',
    "COMPARE": "a comparison (<, <=, ==, !=, >=, >)",
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


def syntax_error(e: UnexpectedInput, text: str, path: str) -> KlcError:
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

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
                               "guard", "rewrite", "hole", "card", "inverse", "isomorphisms"))
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
    return list(parse_file(text, path).rules)


def parse_file(text: str, path: str) -> FileSpec:
    """Step 1: everything a file holds as written: rules, named guards, uses."""
    from lark import Tree
    from lark.exceptions import UnexpectedInput

    try:
        tree = grammar().parse(text)
    except UnexpectedInput as e:
        raise syntax_error(e, text, path) from None
    rules, defines, uses = [], [], []
    for item in tree.children:
        if not isinstance(item, Tree):
            continue
        if item.data == "guard_def":
            name, *rest = item.children
            params = tuple(_guard_arg(a) for a in rest[:-1] if a is not None)
            defines.append(GuardDefSpec(str(name), params, guard_expr(rest[-1]), path,
                                        item.meta.line, item.meta.column))
        elif item.data == "use_decl":
            uses.append(UseSpec(_text(item.children[0]).value, path, item.meta.line,
                                item.meta.column))
        else:
            rules.append(_rule_spec(item, path))
    return FileSpec(tuple(rules), tuple(defines), tuple(uses))


def _rule_spec(tree: Tree, path: str) -> RuleSpec:
    from lark import Tree

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
    if kind == "anchor_any_field":  # alternation: a tuple of the branches' code blocks
        return FieldSpec("anchor", tuple(_code(c) for c in ch), line, col)
    if kind == "guard_field":
        return FieldSpec("guard", guard_expr(ch[0]), line, col)
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
    if kind == "isomorphisms_field":  # the names (tokens) after each "-"
        return FieldSpec("isomorphisms", tuple(c.children[0] for c in ch), line, col)
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
        value = guard_expr(value)
    return (kind, value, tree.meta.line, tree.meta.column)


def _value_token(v: Token | Tree) -> Token:
    """A hole value: a token; a string value becomes a STRING token holding its text."""
    from lark import Token, Tree

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
        raise BadText(tok.line, tok.column + e.pos, f"bad string: {e.msg}") from None
    return Text(value, tok.line, tok.column, "\\" not in raw)


class BadText(Exception):
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
    """Any rewrite clause, whatever its kind: the grammar line says its parts."""
    kind = str(tree.data).removesuffix("_edit")
    return EditSpec(kind, tuple(_plain(c) for c in tree.children), line, col)


_GUARD_TREES = frozenset({"guard_call", "guard_neg", "guard_and", "guard_or"})


def _plain(c: Token | Tree) -> Any:
    """A child of a rewrite clause as data (see ``EditSpec``)."""
    from lark import Token

    if isinstance(c, Token):
        return _code(c) if c.type == "CODE" else c
    if c.data == "string":
        return _text(c)
    if c.data in _GUARD_TREES:
        return guard_expr(c)
    # a block item: `anchor: ...` of a within block (the rule names the item)
    return (str(c.data).partition("_")[2], _plain(c.children[0]), c.meta.line, c.meta.column)


def guard_expr(tree: Tree | Token) -> GuardExpr:
    from lark import Tree

    assert isinstance(tree, Tree)
    kind = str(tree.data)
    line, col = tree.meta.line, tree.meta.column
    if kind == "guard_call":
        name, *args = tree.children
        return GuardCall(str(name), tuple(_guard_arg(a) for a in args if a is not None),
                         line, col)
    if kind == "guard_neg":
        return GuardNot(guard_expr(tree.children[0]), line, col)
    operands = tuple(guard_expr(c) for c in tree.children)
    return (GuardAnd if kind == "guard_and" else GuardOr)(operands, line, col)


def _guard_arg(a: Token | Tree) -> GuardArg:
    from lark import Tree

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


