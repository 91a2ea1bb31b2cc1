"""Comparisons tree-sitter-cuda reads as template arguments, read again as comparisons.

``curRow > -1 && curRow < h && curCol > -1 && curCol < w`` is C: four comparisons joined by
``&&``. tree-sitter-cuda, which cannot know that ``curRow`` names no template, reads ``curRow
< h && curCol >`` as a template's argument list (``template_function``) followed by ``- 1``.
The tree stays as the parser made it (every byte kept, the model built on it); this module
gives the expressions that hold such a misreading as they are meant, for the matcher to read
(``klc.match.reading``), without changing a byte:

- a ``template_function`` is misread where it is not called (``f<T>(x)``), its name is no
  template the file declares (a ``template <...>`` function, class or alias of that name) and
  it stands inside an expression (a binary expression's operand, a condition);
- the smallest expression around it that a condition, a statement or an initialiser holds
  is parsed again alone, with the misread name in parentheses (``(curRow) < h``: a
  parenthesised name takes no template arguments); where that parse has no error and no
  template left, its tree is the reading, every node's offsets mapped back to the file's
  (the parentheses added are dropped: the name is its own node again);
- the reading is a tree of ``Reread`` nodes, which answer what the matcher and the checks
  ask of a node (kinds, children with their field names, spans, text, parent); a leaf whose
  span and kind a node of the file's tree has is that node itself.

``rereadings(unit)`` gives, for each parent of a misread expression, its children with the
reading in place of the expression.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tree_sitter import Node, Point

from klc.cuda.syntax import LANGUAGE, parse_expression

if TYPE_CHECKING:
    from klc.cuda.model import Unit

# where a misread expression ends: the node kinds that hold an expression whole
_HOLDERS = frozenset({"condition_clause", "expression_statement", "init_declarator",
                      "return_statement", "argument_list", "parenthesized_expression",
                      "subscript_argument_list", "for_statement", "while_statement",
                      "conditional_expression"})
_EXPRESSIONS = frozenset({"binary_expression", "unary_expression", "template_function"})


class Reread:
    """A node of an expression read again (its offsets the file's)."""

    __slots__ = (
        "_children",
        "_fields",
        "_lines",
        "end_byte",
        "id",
        "is_named",
        "parent",
        "source",
        "start_byte",
        "type",
    )

    def __init__(self, type_: str, start: int, end: int, named: bool, source: bytes,
                 lines: Any) -> None:
        self.type = type_
        self.start_byte = start
        self.end_byte = end
        self.is_named = named
        self.source = source
        self._lines = lines
        self._children: list[Any] = []
        self._fields: list[str | None] = []
        self.parent: Any = None
        self.id = -(hash((type_, start, end)) & 0x7FFFFFFFFFFF) - 1  # (never a real id)

    # what the matcher, the checks and the analyses ask of a node
    is_missing = False
    is_error = False
    has_error = False
    is_extra = False
    has_changes = False

    @property
    def children(self) -> list[Any]:
        return list(self._children)

    @property
    def child_count(self) -> int:
        return len(self._children)

    @property
    def named_children(self) -> list[Any]:
        return [c for c in self._children if c.is_named]

    @property
    def named_child_count(self) -> int:
        return len(self.named_children)

    def child(self, i: int) -> Any:
        return self._children[i] if 0 <= i < len(self._children) else None

    def named_child(self, i: int) -> Any:
        named = self.named_children
        return named[i] if 0 <= i < len(named) else None

    def child_by_field_name(self, name: str) -> Any:
        for c, f in zip(self._children, self._fields, strict=True):
            if f == name:
                return c
        return None

    def child_by_field_id(self, fid: int) -> Any:
        name = LANGUAGE.field_name_for_id(fid)
        return self.child_by_field_name(name) if name else None

    def children_by_field_name(self, name: str) -> list[Any]:
        return [c for c, f in zip(self._children, self._fields, strict=True) if f == name]

    def field_name_for_child(self, i: int) -> str | None:
        return self._fields[i] if 0 <= i < len(self._fields) else None

    @property
    def text(self) -> bytes:
        return self.source[self.start_byte:self.end_byte]

    @property
    def byte_range(self) -> tuple[int, int]:
        return self.start_byte, self.end_byte

    @property
    def start_point(self) -> Point:
        return self._lines(self.start_byte)

    @property
    def end_point(self) -> Point:
        return self._lines(self.end_byte)

    def _sibling(self, step: int, named: bool) -> Any:
        if self.parent is None:
            return None
        kids = self.parent.children
        i = next((k for k, c in enumerate(kids) if c is self), None)
        if i is None:
            return None
        i += step
        while 0 <= i < len(kids):
            if not named or kids[i].is_named:
                return kids[i]
            i += step
        return None

    @property
    def next_sibling(self) -> Any:
        return self._sibling(1, False)

    @property
    def prev_sibling(self) -> Any:
        return self._sibling(-1, False)

    @property
    def next_named_sibling(self) -> Any:
        return self._sibling(1, True)

    @property
    def prev_named_sibling(self) -> Any:
        return self._sibling(-1, True)

    @property
    def descendant_count(self) -> int:
        return 1 + sum(c.descendant_count for c in self._children)

    def descendant_for_byte_range(self, start: int, end: int) -> Any:
        for c in self._children:
            if c.start_byte <= start and end <= c.end_byte:
                return c.descendant_for_byte_range(start, end)
        return self if self.start_byte <= start and end <= self.end_byte else None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reread) and (self.type, self.start_byte, self.end_byte) == (
            other.type, other.start_byte, other.end_byte)

    def __hash__(self) -> int:
        return hash((self.type, self.start_byte, self.end_byte))

    def __repr__(self) -> str:
        return f"<Reread type={self.type}, start_byte={self.start_byte}, end={self.end_byte}>"


def _declared_templates(declarations: list[Node], source: bytes) -> set[bytes]:
    """The names the file's ``template_declaration`` nodes declare as templates (functions,
    classes, aliases)."""
    names: set[bytes] = set()
    for n in declarations:
        for c in n.named_children:
            target = c.child_by_field_name("declarator") or c.child_by_field_name("name")
            while target is not None and target.type not in (
                    "identifier", "type_identifier", "field_identifier"):
                target = target.child_by_field_name("declarator")
            if target is not None:
                names.add(source[target.start_byte:target.end_byte])
    return names


def _misread(n: Node, source: bytes) -> bytes | None:
    """The name of a ``template_function`` that stands where a comparison could (None where
    it cannot be one); it is misread unless the file declares that name a template."""
    name = n.child_by_field_name("name")
    parent = n.parent
    if name is None or name.type != "identifier" or parent is None:
        return None
    if parent.type == "call_expression" and parent.child_by_field_name("function") == n:
        return None  # f<T>(x)
    if parent.type not in _EXPRESSIONS | _HOLDERS:
        return None
    return source[name.start_byte:name.end_byte]


def rereadings(unit: Unit, significant: Any) -> dict[int, list[Any]]:
    """For each parent of a misread expression in the unit, its significant children
    (``significant``, the matcher's) with the expression read again in its place; an
    expression whose reading fails stays as it is. The nodes come from the unit's index by
    type (``Unit.nodes_by_type``: the query run that builds it finds these too; a walk of
    the tree in Python cost more than the listing's matching on large files)."""
    root, source, nodes_by_type = unit.root, unit.source, unit.nodes_by_type
    if b"<" not in source or b">" not in source:
        return {}
    found = nodes_by_type(("template_function",))["template_function"]
    if not found:
        return {}
    # the outermost ones (a template_function inside another's arguments is read with it)
    outer: list[Node] = []
    for n in found:
        if not outer or n.start_byte >= outer[-1].end_byte:
            outer.append(n)
    named = [(t, _misread(t, source)) for t in outer]
    found = [t for t, name in named if name is not None]
    if not found:
        return {}
    templates = _declared_templates(
        nodes_by_type(("template_declaration",))["template_declaration"], source)
    found = [t for t, name in named if name is not None and name not in templates]
    out: dict[int, list[Any]] = {}
    done: set[tuple[int, int]] = set()
    for t in found:
        top = t
        while top.parent is not None and top.parent.type in _EXPRESSIONS:
            top = top.parent
        holder = top.parent
        if holder is None or (top.start_byte, top.end_byte) in done:
            continue
        done.add((top.start_byte, top.end_byte))
        reread = _reread(top, templates, source, unit._line_starts, root)
        if reread is None:
            continue
        kids = [reread if k.id == top.id else k for k in significant(holder)]
        if isinstance(reread, Reread):
            reread.parent = holder
        out[holder.id] = kids
    return out


def _reread(top: Node, templates: set[bytes], source: bytes, line_starts: list[int],
            root: Node) -> Any:
    """``top`` parsed again with each misread name in parentheses, or None."""
    names: list[Node] = []
    stack = [top]
    while stack:
        n = stack.pop()
        if n.type == "template_function" and (name := _misread(n, source)) is not None \
                and name not in templates:
            names.append(n.child_by_field_name("name"))  # type: ignore[arg-type]
        stack.extend(n.children)
    if not names:
        return None
    names.sort(key=lambda n: n.start_byte)
    text = bytearray()
    where: list[int] = []  # the file's offset of each byte of the text
    pos = top.start_byte
    for name in names:
        chunk = source[pos:name.start_byte]
        text += chunk
        where += range(pos, name.start_byte)
        text += b"(" + source[name.start_byte:name.end_byte] + b")"
        where += [-1, *range(name.start_byte, name.end_byte), -1]
        pos = name.end_byte
    text += source[pos:top.end_byte]
    where += range(pos, top.end_byte)
    try:
        parsed = parse_expression(text.decode("utf-8"))
    except UnicodeDecodeError:
        return None
    if parsed is None:
        return None
    node, src = parsed
    inner = node.named_children[0] if node.named_child_count == 1 else None
    base = node.start_byte + 1  # (where the text starts in src)
    if inner is None or _holds(inner, "template_function") or inner.has_error:
        return None

    def lines(offset: int) -> Point:
        lo, hi = 0, len(line_starts)
        while lo + 1 < hi:
            mid = (lo + hi) // 2
            if line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid
        return Point(lo, offset - line_starts[lo])

    def build(n: Node) -> Any:
        # a parenthesis this module added around a name: the name itself
        if n.type == "parenthesized_expression" and n.child_count == 3 \
                and where[n.start_byte - base] == -1:
            return build(n.children[1])
        span = [w for w in where[n.start_byte - base:n.end_byte - base] if w >= 0]
        if not span:
            return None
        s, e = span[0], span[-1] + 1  # (an added parenthesis at either end left out)
        if not n.children:
            if src[n.start_byte:n.end_byte] != source[s:e]:
                return None
            real = root.descendant_for_byte_range(s, e)
            if real is not None and real.type == n.type and real.start_byte == s \
                    and real.end_byte == e and not real.children:
                return real  # (the file's own node: ``curRow`` is read right already)
        r = Reread(n.type, s, e, n.is_named, source, lines)
        for i, c in enumerate(n.children):
            k = build(c)
            if k is None:
                return None
            if isinstance(k, Reread):
                k.parent = r
            r._children.append(k)
            r._fields.append(n.field_name_for_child(i))
        return r

    return build(inner)


def _holds(n: Node, kind: str) -> bool:
    stack = [n]
    while stack:
        c = stack.pop()
        if c.type == kind:
            return True
        stack.extend(c.children)
    return False
