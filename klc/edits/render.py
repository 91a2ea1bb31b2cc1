"""Templates: a rewrite template filled at a match. Metavariables (``$X``, ``$$$X``) get the
original text of what they bound (moved with its lines' indentation), holes (``?name``) their
validated values, each put in parentheses where the template's operator would otherwise
change its meaning."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from klc.cuda.syntax import F_LEFT, F_OPERATOR, parse_expression, parser
from klc.errors import KlcError
from klc.match.iso import enabled

if TYPE_CHECKING:
    from tree_sitter import Node

    from klc.match import Match

SUBST_RE = re.compile(r"\$\$\$([A-Za-z_]\w*)|\$([A-Za-z_]\w*)|\?([A-Za-z_]\w*)")
_LONE_RUN = re.compile(r"[ \t]*\$\$\$([A-Za-z_]\w*);?[ \t]*")


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
    template = _kept_const(template, match)
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
    for m in SUBST_RE.finditer(template):
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
            text = _moved(text, _bound_indent(match.unit.source, b),
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


# a declaration a template writes of a metavariable's name, `$T $X = ...` or `int $X = ...`
# at a statement's start, without a const of its own
_TEMPLATE_DECL = re.compile(
    r"(?m)^(?P<lead>[ \t]*)(?P<type>\$[A-Za-z_]\w*|[A-Za-z_]\w*(?:[ \t]+[A-Za-z_]\w*)*)"
    r"[ \t]+\$(?P<name>[A-Za-z_]\w*)[ \t]*=(?!=)")
_TYPE_WORDS_BEFORE = frozenset({"const", "volatile", "static", "extern", "constexpr",
                                "__shared__", "__constant__", "__device__", "return"})


def _kept_const(template: str, match: Match) -> str:
    """The template with ``const`` put back on each declaration it writes of a name whose
    declaration the anchor matched with a ``const`` that the pattern did not spell (the
    ``const_local`` isomorphism, klc.match.iso: ``$T $X = e;`` matches ``const unsigned x =
    e;`` and binds ``unsigned``): what was matched and is written back keeps its qualifier,
    as Coccinelle keeps what a rule matched. Only where the template never assigns the name
    nor takes its address (a grid-stride loop's ``$I += stride`` needs it non-const), and
    the matched declarator is a plain name (``const float* p`` is a pointer to const)."""
    decls = list(_TEMPLATE_DECL.finditer(template)) if "$" in template else []
    if not decls or "const_local" not in enabled(getattr(match.rule, "isos_off", ())):
        return template
    out = template
    for m in reversed(decls):
        words = m.group("type").split()
        if words[0] in _TYPE_WORDS_BEFORE or words[-1] in _TYPE_WORDS_BEFORE:
            continue
        name = m.group("name")
        if not _matched_const(match, name) or _written(template, name, m.end()) or \
                re.search(r"\bconst\b[^;=]*\$" + re.escape(name) + r"\s*=(?!=)",
                          getattr(match.rule, "anchor", "") or ""):
            continue  # (an anchor that spells the const and a template that drops it)
        at = m.start("type")
        out = out[:at] + "const " + out[at:]
    return out


def _matched_const(match: Match, name: str) -> bool:
    """The metavariable ``name`` bound the plain name a declaration of the matched code
    declares, and that declaration is ``const`` (a qualifier before its type)."""
    b = match.bindings.get(name)
    node = b.node if b is not None else None
    if node is None or node.type != "identifier" or not match.start <= node.start_byte \
            < match.end:
        return False
    init = node.parent
    if init is None or init.type != "init_declarator" or init.child_by_field_name(
            "declarator") != node:
        return False
    decl = init.parent
    if decl is None or decl.type != "declaration":
        return False
    return any(c.type == "type_qualifier" and c.text == b"const" for c in decl.children)


def _written(template: str, name: str, after_decl: int) -> bool:
    """Does the template assign ``$name`` (other than the declaration whose ``=`` ends at
    ``after_decl``), increment it or take its address?"""
    var = r"\$" + re.escape(name) + r"(?![\w])"
    for m in re.finditer(var + r"\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)", template):
        if m.end() != after_decl:
            return True
    return bool(re.search(r"(?:\+\+|--|&)\s*" + var + "|" + var + r"\s*(?:\+\+|--)",
                          template))


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
    prefix, suffix = _SLOT_WRAP
    text = re.sub(r"\?(?=[A-Za-z_])", "$", template)  # ?h -> $h: same length, an identifier
    src = (prefix + text + suffix).encode()
    root = parser().parse(src).root_node
    slots: dict[int, int] = {}
    for m in SUBST_RE.finditer(template):
        start = len(prefix.encode()) + len(template[:m.start()].encode())
        end = start + len(m.group(0).encode())
        node = root.descendant_for_byte_range(start, end)
        if node is None or node.type != "identifier" or node.start_byte != start \
                or node.end_byte != end or node.parent is None:
            continue
        slots[m.start()] = _slot(node, node.parent)
    return slots


def in_context(text: str, nodes: tuple[Node, ...] | list[Node]) -> str:
    """The rendered replacement of one matched expression, in parentheses where the code
    around the match binds tighter than the replacement does (`a + t / (1 << 5)` whose
    `t / (1 << 5)` becomes `t >> 5` is `a + (t >> 5)`): the rewrite keeps the meaning of
    the code around it, as substituted values keep the template's."""
    if len(nodes) != 1 or nodes[0].parent is None:
        return text
    node = nodes[0]
    if _precedence(node) is None:  # a statement, a declaration: written as it is
        return text
    have = _hole_precedence(text)
    if have is None or have >= PRIMARY:
        return text
    if have < _slot(node, node.parent):
        return f"({text})"
    return text


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


def _bound_indent(source: bytes, b: Any) -> str:
    """The indentation bound text moves from: that of its own line, except for a block
    (``{...}``) that starts after other code on its line: then that of the line where the
    statement it belongs to starts (a loop's body whose `{` ends the second line of a long
    header sits one level inside the loop's first line, not inside the continuation)."""
    line_start = source.rfind(b"\n", 0, b.start) + 1
    node = b.node
    if node is None or node.type != "compound_statement" \
            or not source[line_start:b.start].strip():
        return _source_line_indent(source, b.start)
    owner = node.parent
    while owner is not None and not owner.type.endswith("statement"):
        owner = owner.parent
    return _source_line_indent(source, owner.start_byte if owner is not None else b.start)


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


def fill_holes(text: str, holes: dict[str, str]) -> str:
    def hole(m: re.Match[str]) -> str:
        if m.group(3) and m.group(3) in holes:
            return holes[m.group(3)]
        return m.group(0)

    return SUBST_RE.sub(hole, text)

