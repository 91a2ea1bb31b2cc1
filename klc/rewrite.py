"""The rewriter: a match and hole values -> byte-span edits on the original text.

Everything outside the edits stays byte for byte. Templates have their metavariables
(``$X``, ``$$$X``) replaced by the original text of what they bound, and their holes
(``?name``) by validated values. The result is re-parsed: an edit that introduces a syntax
error is refused, not written.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from klc.errors import KlcError
from klc.frontend import F_DECLARATOR, F_LEFT, F_OPERATOR, balanced_end, parse_expression

if TYPE_CHECKING:
    from tree_sitter import Node

    from klc.frontend import Function, Unit
    from klc.match import Match
    from klc.rules import Edit, Rule

_SUBST_RE = re.compile(r"\$\$\$([A-Za-z_]\w*)|\$([A-Za-z_]\w*)|\?([A-Za-z_]\w*)")
_QUALIFIERS_AFTER_STAR = frozenset({"__restrict__", "__restrict", "restrict"})
_LONE_RUN = re.compile(r"[ \t]*\$\$\$([A-Za-z_]\w*);?[ \t]*")


@dataclass(frozen=True)
class ByteEdit:
    """Replace source[start:end] with text (an insertion when start == end)."""

    start: int
    end: int
    text: str
    what: str  # for messages: "replace", "insert_body_start", ...


@dataclass
class Rewrite:
    """The edits one match asks for, and the launch-geometry changes for the spec."""

    match: Match
    holes: dict[str, str]
    edits: list[ByteEdit] = field(default_factory=list)
    launch: list[tuple[str, str, str, int]] = field(default_factory=list)  # dim, axis, op, k


def render(template: str, match: Match, holes: dict[str, str], indent: str = "",
           overrides: dict[str, str] | None = None) -> str:
    """Fill a template: metavariables get the bound source text, holes their values.

    ``indent`` prefixes the template's own lines after the first (the anchor's first line
    keeps the indentation it had in the file). Bound text spanning several lines is moved
    with its line: its later lines shift by the difference between the indentation of the
    line it came from and the line it lands on, so that a loop body put under an ``if``
    reads one level deeper, and one taken back out reads as before (byte for byte).
    ``overrides`` gives the text to use for a binding instead of its source text (the code
    a ``rewrite within`` edit rewrote).
    """
    # a line holding only an empty run (`$$$KEEP;` that bound nothing) is dropped whole
    template = "\n".join(
        ln for ln in template.split("\n")
        if not ((lone := _LONE_RUN.fullmatch(ln)) and (b := match.bindings.get(lone.group(1)))
                is not None and not b.text.strip()))
    if indent and "\n" in template:
        first, *rest = template.split("\n")
        template = "\n".join([first] + [indent + ln if ln.strip() else ln for ln in rest])
    out: list[str] = []
    pos = 0
    skip_semicolon = False
    for m in _SUBST_RE.finditer(template):
        chunk = template[pos:m.start()]
        if skip_semicolon and chunk.startswith(";"):
            chunk = chunk[1:]
        out.append(chunk)
        name = m.group(1) or m.group(2)
        if m.group(3):
            value = holes.get(m.group(3))
            if value is None:
                raise KlcError(f"{match.rule.location}: hole ?{m.group(3)} has no value")
            decl = match.rule.holes.get(m.group(3))  # a sub-rule declares none: judge the value
            if decl is None or decl.type in ("expr", "int"):
                value = _operand(value, _hole_precedence(value), template, m.start())
            out.append(value)
            skip_semicolon = False
        else:
            b = match.bindings.get(name)
            if b is None:
                raise KlcError(f"{match.rule.location}: ${name} is not bound by the anchor")
            text = overrides[name] if overrides and name in overrides else b.text
            text = _moved(text, _source_line_indent(match.unit.source, b.start),
                          _landing_indent(out, indent))
            if m.group(2) is not None and b.node is not None and not (overrides and
                                                                      name in overrides):
                text = _operand(text, _precedence(b.node), template, m.start())
            out.append(text)
            # a declaration bound in `for ($INIT; …)` owns its ";": do not write two; nor
            # does a run that ends in a preprocessor line (`#pragma unroll;` is not C) or in
            # a compound statement (`for (…) { … };` would add an empty statement)
            last = text.rstrip().rsplit("\n", 1)[-1].lstrip()
            skip_semicolon = text.rstrip().endswith(";") or last.startswith("#") or (
                m.group(1) is not None and text.rstrip().endswith("}"))
        pos = m.end()
    tail = template[pos:]
    if skip_semicolon and tail.startswith(";"):
        tail = tail[1:]
    out.append(tail)
    return "".join(out)


# Substituted code keeps its meaning: a value is parenthesised where the template's operators
# would otherwise take its operands apart (`$E * 2` with $E bound to `a + b`, `x * ?h` with
# ?h = `a + b`). Precedences follow C++ (higher binds tighter); PRIMARY binds tightest of all
# (a name, a literal, a call, a subscript, a member, a parenthesised expression).
PRIMARY = 16
_UNARY = 15
_BINARY = {"*": 13, "/": 13, "%": 13, "+": 12, "-": 12, "<<": 11, ">>": 11, "<=>": 10,
           "<": 10, "<=": 10, ">": 10, ">=": 10, "==": 9, "!=": 9, "&": 8, "bitand": 8,
           "^": 7, "xor": 7, "|": 6, "bitor": 6, "&&": 5, "and": 5, "||": 4, "or": 4}
_PRIMARY_TYPES = frozenset({
    "identifier", "field_identifier", "qualified_identifier", "template_function",
    "number_literal", "string_literal", "raw_string_literal", "concatenated_string",
    "char_literal", "user_defined_literal", "true", "false", "null", "nullptr", "this",
    "parenthesized_expression", "call_expression", "subscript_expression", "field_expression",
    "compound_literal_expression"})
_UNARY_TYPES = frozenset({"unary_expression", "pointer_expression", "cast_expression",
                          "sizeof_expression", "alignof_expression", "update_expression",
                          "new_expression", "delete_expression"})
_LOWEST = {"conditional_expression": 3, "assignment_expression": 2, "comma_expression": 1}


def _precedence(node: Node) -> int | None:
    """How tightly an expression node binds; None for what is not an expression (a type, a
    statement) or not known here: such code is written as it is."""
    t = node.type
    if t == "number_literal" and (node.text or b"")[:1] in (b"-", b"+"):
        return _UNARY  # tree-sitter reads a signed number as one literal; C reads `-` `4`
    if t in _PRIMARY_TYPES:
        return PRIMARY
    if t in _UNARY_TYPES:
        return _UNARY
    if t == "binary_expression":
        op = node.child_by_field_id(F_OPERATOR)
        return _BINARY.get(op.type) if op is not None else None
    return _LOWEST.get(t)


def _hole_precedence(value: str) -> int | None:
    """The precedence of a hole value that parses as one expression (None otherwise)."""
    parsed = parse_expression(value)
    if parsed is None:
        return None
    inner = [c for c in parsed[0].named_children if c.type != "comment"]
    return _precedence(inner[0]) if len(inner) == 1 else None


def _operand(text: str, precedence: int | None, template: str, at: int) -> str:
    """``text`` in parentheses when the template's slot at character ``at`` binds tighter
    than the expression does."""
    if precedence is None or precedence >= PRIMARY:
        return text
    if precedence < _slot_precedences(template).get(at, PRIMARY):
        return f"({text})"
    if at > 0 and template[at - 1] in _OPERATOR_CHARS:  # `-?k` with -4 is `--4`: one token
        return f"({text})"
    return text


_OPERATOR_CHARS = frozenset("+-*/%&|^!~<>=")


_SLOT_WRAP = ("void __klc_template__() {\n", "\n}\n")
# where a placeholder stands for a whole expression: (parent type, field or "") -> the least
# precedence a value needs there (1: anything, a comma expression included; 2: no comma)
_WHOLE = {("parenthesized_expression", ""): 1, ("expression_statement", ""): 1,
          ("condition_clause", "value"): 1, ("return_statement", ""): 1,
          ("for_statement", "update"): 1, ("for_statement", "condition"): 1,
          ("for_statement", "initializer"): 1, ("argument_list", ""): 2,
          ("initializer_list", ""): 2, ("init_declarator", "value"): 2,
          ("subscript_argument_list", ""): 2, ("assignment_expression", "right"): 2,
          ("comma_expression", "left"): 1, ("comma_expression", "right"): 1,
          ("conditional_expression", "consequence"): 2,
          ("conditional_expression", "alternative"): 3,
          ("conditional_expression", "condition"): 4, ("assignment_expression", "left"): _UNARY}


@functools.lru_cache(maxsize=1024)
def _slot_precedences(template: str) -> dict[int, int]:
    """For each metavariable or hole of a template (by character offset), the least
    precedence an expression needs to stand there without parentheses: the template is
    parsed with its placeholders read as identifiers. A slot that cannot be told (the
    template does not parse around it, a template argument) asks for a primary."""
    from klc.frontend import parser

    prefix, suffix = _SLOT_WRAP
    text = re.sub(r"\?(?=[A-Za-z_])", "$", template)  # ?h -> $h: same length, an identifier
    src = (prefix + text + suffix).encode()
    root = parser().parse(src).root_node
    slots: dict[int, int] = {}
    for m in _SUBST_RE.finditer(template):
        start = len(prefix.encode()) + len(template[:m.start()].encode())
        end = start + len(m.group(0).encode())
        node = root.descendant_for_byte_range(start, end)
        if node is None or node.type != "identifier" or node.start_byte != start \
                or node.end_byte != end or node.parent is None:
            continue
        slots[m.start()] = _slot(node, node.parent)
    return slots


def _slot(node: Node, parent: Node) -> int:
    kind = parent.type
    if kind == "binary_expression":
        op = parent.child_by_field_id(F_OPERATOR)
        prec = _BINARY.get(op.type) if op is not None else None
        if prec is None:
            return PRIMARY
        # left-associative: the right operand must bind strictly tighter
        left = parent.child_by_field_id(F_LEFT)
        return prec if left is not None and left.start_byte == node.start_byte else prec + 1
    for i, child in enumerate(parent.children):
        if child.start_byte == node.start_byte and child.end_byte == node.end_byte:
            field = parent.field_name_for_child(i) or ""
            return _WHOLE.get((kind, field), _WHOLE.get((kind, ""), PRIMARY))
    return PRIMARY


def _source_line_indent(source: bytes, offset: int) -> str:
    """The leading whitespace of the source line that holds ``offset``."""
    start = source.rfind(b"\n", 0, offset) + 1
    line = source[start:offset].decode("utf-8", "replace")
    return line[: len(line) - len(line.lstrip())]


def _landing_indent(out: list[str], indent: str) -> str:
    """The indentation of the output line being written (the first line of a template
    lands at ``indent``, where the caller puts it)."""
    text = "".join(out)
    nl = text.rfind("\n")
    line = text[nl + 1:] if nl >= 0 else indent + text
    return line[: len(line) - len(line.lstrip())]


def _moved(text: str, was: str, now: str) -> str:
    """Bound text whose first line moves from indentation ``was`` to ``now``: its later
    lines move with it (a line indented less than the shift stays as it is)."""
    if "\n" not in text or was == now:
        return text
    first, *rest = text.split("\n")
    if now.startswith(was):
        extra = now[len(was):]
        rest = [extra + ln if ln.strip() else ln for ln in rest]
    elif was.startswith(now):
        cut = was[len(now):]
        rest = [ln[len(cut):] if ln.startswith(cut) else ln for ln in rest]
    else:  # tabs against spaces: leave the text as written
        return text
    return "\n".join([first, *rest])


def line_indent(source: bytes, offset: int) -> str:
    """The whitespace between the start of offset's line and offset, if only whitespace."""
    start = source.rfind(b"\n", 0, offset) + 1
    prefix = source[start:offset].decode("utf-8", "replace")
    return prefix[: len(prefix) - len(prefix.lstrip())]


def plan(match: Match, holes: dict[str, str]) -> Rewrite:
    """The byte edits of every rewrite clause of the match's rule."""
    rule: Rule = match.rule
    unit: Unit = match.unit
    rw = Rewrite(match, holes)
    overrides, direct = _within(match, holes)
    for edit in rule.edits:
        kind = edit.kind
        if kind == "within":
            continue
        if kind == "replace":
            rw.edits.append(_replace(match, edit, holes, overrides))
            used = {r.group(1) or r.group(2) for r in _SUBST_RE.finditer(edit.template or "")}
            direct = [e for e in direct if e.what not in used]
        elif kind == "insert_body_start":
            fn = _function(match, edit)
            rw.edits.append(_insert_body_start(unit, fn, render(edit.template or "", match,
                                                                 holes)))
        elif kind == "remove_statement":
            e = _remove_statement(unit, _function(match, edit),
                                  render(edit.template or "", match, holes))
            if e is not None:
                rw.edits.append(e)
        elif kind in ("add_qualifier", "remove_qualifier"):
            e = _qualifier_edit(match, edit, holes)
            if e is not None:
                rw.edits.append(e)
        elif kind in ("add_attribute", "remove_attribute"):
            e = _attribute_edit(match, edit, holes)
            if e is not None:
                rw.edits.append(e)
        elif kind == "launch":
            factor = edit.factor
            if isinstance(factor, str):
                value = holes.get(factor.lstrip("?"))
                if value is None:
                    raise KlcError(f"{rule.location}: hole {factor} has no value")
                factor = int(value)
            rw.launch.append((edit.dim or "grid", edit.axis or "x", edit.op or "/",
                              int(factor or 1)))
        else:  # the loader refuses unknown kinds; this is a programming error
            raise KlcError(f"{rule.location}: unknown rewrite kind {kind!r}")
    # sub-rewrites of a binding no replace template writes out edit the source in place
    rw.edits.extend(ByteEdit(e.start, e.end, e.text, "within") for e in direct)
    return rw


def _within(match: Match, holes: dict[str, str]) -> tuple[dict[str, str], list[ByteEdit]]:
    """The code each ``rewrite within`` target becomes ({name: text}), and the same
    sub-rewrites as source edits (``what`` holds the target's name)."""
    subs = getattr(match, "subs", None)
    if subs is None or not subs.matches:
        return {}, []
    source = match.unit.source
    overrides: dict[str, str] = {}
    direct: list[ByteEdit] = []
    for name, sms in subs.matches.items():
        b = match.bindings[name]
        edits = []
        for sm in sms:
            e = _replace(sm, sm.rule.edits[0], holes)
            start, text = e.start, e.text
            if start < b.start:  # the edit took the line's indentation: the binding did not
                lead = source[start:b.start].decode("utf-8", "replace")
                if text.startswith(lead):
                    text = text[len(lead):]
                start = b.start
            edits.append(ByteEdit(start, e.end, text, name))
        direct.extend(edits)
        rel = [ByteEdit(e.start - b.start, e.end - b.start, e.text, e.what) for e in edits]
        overrides[name] = apply_edits(b.text.encode(), rel).decode("utf-8")
    return overrides, direct


def _replace(match: Match, edit: Edit, holes: dict[str, str],
             overrides: dict[str, str] | None = None) -> ByteEdit:
    """Replace the anchor. When the match starts its line, the edit starts at the line start
    and every template line gets the indentation of the first matched statement that is
    not a preprocessor line (a "#pragma" is often written in column 1)."""
    unit = match.unit
    line_start = unit.source.rfind(b"\n", 0, match.start) + 1
    if unit.source[line_start:match.start].strip():
        indent = line_indent(unit.source, match.start)
        text = render(edit.template or "", match, holes, indent, overrides)
        return minimal_edit(unit.source, ByteEdit(match.start, match.end,
                                                  _keep_attributes(match, text), "replace"))
    code = next((n for n in match.nodes if not n.type.startswith("preproc")), match.nodes[0])
    indent = line_indent(unit.source, code.start_byte)
    text = render(edit.template or "", match, holes, indent, overrides)
    return minimal_edit(unit.source, ByteEdit(line_start, match.end,
                                              indent + _keep_attributes(match, text), "replace"))


# C++ tokens, for comparing code as the compiler reads it: a preprocessor line whole (its
# line break ends it), string and character literals, names and numbers, operators (the
# longest first); blanks and comments separate tokens and are not tokens
_TOKEN_RE = re.compile(rb"""
    (?P<skip>\s+|//[^\n]*|/\*[\s\S]*?\*/)
  | (?P<tok>\#(?:\\\n|[^\n])*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|[A-Za-z_0-9.]+
           |>>=|<<=|->\*|\.\.\.|::|->|\+\+|--|<<|>>|<=>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=
           |\#\#|[^\sA-Za-z_0-9.])
""", re.X)


def _tokens(text: bytes) -> list[tuple[int, int, bytes]]:
    """(start, end, the token as compared: a directive with its blanks collapsed)."""
    return [(m.start(), m.end(), b" ".join(m.group().split()) if m.group()[:1] == b"#"
             else m.group()) for m in _TOKEN_RE.finditer(text) if m.lastgroup == "tok"]


def minimal_edit(source: bytes, edit: ByteEdit) -> ByteEdit:
    """The edit shrunk to the tokens it changes: the leading and trailing tokens that the
    replacement writes as the original had them keep the original bytes, with their blanks,
    line breaks and comments (``#pragma unroll`` put before ``for (...)\n    stmt;`` leaves
    the loop as it was written, not joined onto one line). Tokens are compared as the
    compiler reads them, so the result means what the full replacement means."""
    old = source[edit.start:edit.end]
    new = edit.text.encode()
    a, b = _tokens(old), _tokens(new)
    p = 0
    while p < len(a) and p < len(b) and a[p][2] == b[p][2]:
        p += 1
    q = 0
    while q < len(a) - p and q < len(b) - p and a[-1 - q][2] == b[-1 - q][2]:
        q += 1
    if p == 0 and q == 0:
        return edit
    old_from = a[p - 1][1] if p else 0
    new_from = b[p - 1][1] if p else 0
    old_to = a[len(a) - q][0] if q else len(old)
    new_to = b[len(b) - q][0] if q else len(new)
    if p + q == len(a) == len(b):  # the same tokens: only blanks differ, keep them
        return ByteEdit(edit.start, edit.start, "", edit.what)
    return ByteEdit(edit.start + old_from, edit.start + old_to,
                    new[new_from:new_to].decode("utf-8"), edit.what)


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


def _function(match: Match, edit: Edit) -> Function:
    if match.function is None:
        raise KlcError(f"{match.rule.location}: rewrite {edit.kind} needs an enclosing "
                       f"function, but the match at {match.unit.where(match.start)} has none")
    return match.function


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
        if " ".join(line.split()) == want:
            return ByteEdit(pos, end, "", "remove_statement")
        pos = end if end < fn.body_end else -1
    return None


def _qualifier_edit(match: Match, edit: Edit, holes: dict[str, str]) -> ByteEdit | None:
    unit, fn = match.unit, _function(match, edit)
    target = (edit.target or "").lstrip("$")
    b = match.bindings.get(target)
    if b is None:
        raise KlcError(f"{match.rule.location}: ${target} is not bound by the anchor")
    name = b.text.strip()
    param = fn.param(name)
    if param is None:
        raise KlcError(f"{unit.where(b.start)}: `{name}` is not a parameter of {fn.name}; "
                       f"{edit.kind} applies to kernel parameters")
    qual = _fill(edit.value or "", holes)
    text = unit.text(param.start, param.end)
    if edit.kind == "add_qualifier":
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
    m = re.search(rf"(?<!\w){re.escape(qual)}(?!\w)[ \t]*", text)
    if m is None:
        return None
    start, end = m.start(), m.end()  # the qualifier and the blanks after it
    return ByteEdit(param.start + len(text[:start].encode()),
                    param.start + len(text[:end].encode()), "", edit.kind)


def _attribute_edit(match: Match, edit: Edit, holes: dict[str, str]) -> ByteEdit | None:
    unit, fn = match.unit, _function(match, edit)
    value = _fill(edit.value or "", holes)
    attr_name = value.split("(")[0].strip()
    existing = None
    if attr_name == "__launch_bounds__" and fn.launch_bounds is not None:
        existing = (fn.launch_bounds.start, fn.launch_bounds.end)
    else:
        header = unit.source[fn.start:fn.body_start]
        i = header.find(attr_name.encode())
        if i >= 0:
            end = fn.start + i + len(attr_name.encode())
            if unit.source[end:end + 1] == b"(":
                end = min(balanced_end(unit.source, end) or fn.body_start, fn.body_start)
            existing = (fn.start + i, end)
    if edit.kind == "remove_attribute":
        if existing is None:
            return None
        start, end = existing
        while end < fn.body_start and unit.source[end:end + 1] in (b" ", b"\t"):
            end += 1
        return ByteEdit(start, end, "", edit.kind)
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


def _fill(text: str, holes: dict[str, str]) -> str:
    def hole(m: re.Match[str]) -> str:
        if m.group(3) and m.group(3) in holes:
            return holes[m.group(3)]
        return m.group(0)

    return _SUBST_RE.sub(hole, text)


def apply_edits(source: bytes, edits: list[ByteEdit]) -> bytes:
    """Apply non-overlapping edits (insertions at one offset keep their order).

    An edit never glues two tokens into one: where the text it writes (or, for a deletion,
    the code it closes up) would put a word character against another (``int *`` +
    ``__restrict__`` + ``g_data``), a blank goes between them. One rule at the one place
    where edits meet the file, rather than a spacing case in each kind of edit."""
    ordered = sorted(enumerate(edits), key=lambda ie: (ie[1].start, ie[1].end, ie[0]))
    out: list[bytes] = []
    pos = 0
    for _, e in ordered:
        if e.start < pos:
            raise KlcError(f"overlapping edits at byte {e.start} ({e.what})")
        out.append(source[pos:e.start])
        text = e.text.encode()
        before = _last_byte(out)
        after = source[e.end:e.end + 1]
        if text:
            if _glues(before, text[:1]):
                text = b" " + text
            if _glues(text[-1:], after):
                text += b" "
        elif _glues(before, after) and not _glues(source[e.start - 1:e.start] if e.start
                                                  else b"", source[e.start:e.start + 1]):
            text = b" "  # a deletion that would join the words around it
        out.append(text)
        pos = e.end
    out.append(source[pos:])
    return b"".join(out)


def _last_byte(chunks: list[bytes]) -> bytes:
    for c in reversed(chunks):
        if c:
            return c[-1:]
    return b""


def _glues(left: bytes, right: bytes) -> bool:
    """Would these two bytes, side by side, run two tokens into one? (word characters: a
    name, a keyword or a number.)"""
    return bool(left) and bool(right) and (left.isalnum() or left == b"_") and (
        right.isalnum() or right == b"_")
