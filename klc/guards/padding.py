"""Guard predicates for flat shared tiles padded against bank conflicts
(passes/flat_padding.rule): ``flat_padded_tile`` and ``row_pitch``.

A 2-D tile is often declared flat, ``__shared__ T t[R * (C + 1)]``, and indexed ``t[r * (C +
1) + c]``, the row pitch written as ``C + 1`` or folded (``33``), or kept in a local (``const
int row = lane * 33;`` then ``t[row + c]``). Removing the padding changes the pitch from
C + 1 to C at every access at once: that keeps the tile's meaning when every access is of
one of those shapes (no pointer into the tile, no access of another layout) and its column
is below C, which is the padding's convention (the column C is the pad, never used); the
gate's verification catches a kernel that broke it."""

from __future__ import annotations

import re

from tree_sitter import Node

from klc.analysis.constants import constant_of
from klc.analysis.declarations import lookup
from klc.analysis.tree import binding_node, operator_of, quoted, snippet, text_of, unparen
from klc.analysis.writes import is_assigned
from klc.guards.registry import GuardContext, Verdict, _metavar, _no, _yes, predicate
from klc.match import Binding


def _value(ctx: GuardContext, node: Node) -> int | None:
    b = Binding("$P", node.start_byte, node.end_byte, None, (node,), ctx.unit.source)
    v, _why, _definite, _sources = constant_of(ctx, b)
    return v if isinstance(v, int) else None


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _is_pitch(ctx: GuardContext, node: Node, c_text: str, c_value: int | None,
              pad: int = 1) -> bool:
    """``node`` is the row pitch: with ``pad`` 1 the padded ``C + 1`` (``1 + C``) as written,
    with ``pad`` 0 ``C`` itself, or a constant equal to C's value plus ``pad``."""
    src = ctx.unit.source
    bare = unparen(node)
    if pad == 0 and _squeeze(text_of(src, bare)) == c_text:
        return True
    if pad == 1 and bare.type == "binary_expression" and operator_of(bare) == "+":
        a, b = bare.child_by_field_name("left"), bare.child_by_field_name("right")
        if a is not None and b is not None and {_squeeze(text_of(src, a)),
                                                _squeeze(text_of(src, b))} == {c_text, "1"}:
            return True
    if c_value is None or (bare.type == "identifier" and \
            lookup(ctx, text_of(src, bare), bare.start_byte) is not None):
        return False
    return _value(ctx, bare) == c_value + pad


def _pitch_product(ctx: GuardContext, node: Node, c_text: str, c_value: int | None,
                   pad: int = 1) -> bool:
    bare = unparen(node)
    if bare.type != "binary_expression" or operator_of(bare) != "*":
        return False
    a, b = bare.child_by_field_name("left"), bare.child_by_field_name("right")
    return a is not None and b is not None and (
        _is_pitch(ctx, b, c_text, c_value, pad) or _is_pitch(ctx, a, c_text, c_value, pad))


def _row_alias(ctx: GuardContext, node: Node, c_text: str, c_value: int | None,
               pad: int = 1) -> str | None:
    """The name of a never-reassigned local initialised to ``X * pitch`` that ``node`` is."""
    src = ctx.unit.source
    bare = unparen(node)
    if bare.type != "identifier":
        return None
    decl = lookup(ctx, text_of(src, bare), bare.start_byte)
    fn = ctx.function
    if decl is None or decl.origin != "local" or decl.init is None or decl.pointer \
            or fn is None or not _pitch_product(ctx, decl.init, c_text, c_value, pad):
        return None
    if is_assigned(ctx, decl.name, decl.end, fn.body_end):
        return None
    return decl.name


def _terms(node: Node) -> list[Node]:
    bare = unparen(node)
    if bare.type == "binary_expression" and operator_of(bare) == "+":
        a, b = bare.child_by_field_name("left"), bare.child_by_field_name("right")
        if a is not None and b is not None:
            return _terms(a) + _terms(b)
    return [bare]


@predicate("flat_padded_tile", _metavar("$TILE"), _metavar("$C"),
           reads=("arguments", "declarations", "spec"), pass_only=True)
def flat_padded_tile(ctx: GuardContext, tile: Binding, c: Binding) -> Verdict:
    """Every use of the flat array $TILE after its declaration is a subscript (never a
    pointer into it, its address never taken) whose index is a row offset plus columns:
    ``X * P``, ``X * P + Y`` (either order), ``X * P + Y + Z``, or ``L + Y`` (either order)
    with ``L`` a local initialised to ``X * P`` and never reassigned, read only so; P the
    padded pitch, ``$C + 1`` as written or a constant equal to it. Removing the padding then
    rewrites every access. Pass-only: the inverse skill checks ``flat_tile_rows``."""
    return _tile_rows(ctx, tile, c, 1)


@predicate("flat_tile_rows", _metavar("$TILE"), _metavar("$C"),
           reads=("arguments", "declarations", "spec"))
def flat_tile_rows(ctx: GuardContext, tile: Binding, c: Binding) -> Verdict:
    """The unpadded tile of ``flat_padded_tile``: every use of $TILE is a row of pitch $C
    (``$C`` as written or a constant equal to it) plus columns, in the same shapes, so that
    padding it (pad_flat_smem_tile) rewrites every access."""
    return _tile_rows(ctx, tile, c, 0)


def _tile_rows(ctx: GuardContext, tile: Binding, c: Binding, pad: int) -> Verdict:
    pitch = f"{c.text.strip()} + 1" if pad else c.text.strip()
    fn = ctx.function
    if fn is None:
        return _no(ctx, f"{quoted(tile)} is not in a function", tile.start)
    unit, src = ctx.unit, ctx.unit.source
    name = tile.text.strip()
    c_text = _squeeze(c.text)
    cnode = binding_node(c)
    c_value = _value(ctx, cnode) if cnode is not None else None
    word = re.compile(rb"(?<![\w.>])" + re.escape(name.encode()) + rb"\b")
    aliases: dict[str, int] = {}
    uses = 0
    for found in word.finditer(src, tile.end, fn.body_end):
        node = unit.root.descendant_for_byte_range(found.start(), found.end())
        if node is None or node.type != "identifier" or node.start_byte != found.start():
            continue
        top = node
        while top.parent is not None and top.parent.type == "parenthesized_expression":
            top = top.parent
        sub = top.parent
        if sub is None or sub.type != "subscript_expression" \
                or sub.child_by_field_name("argument") != top:
            return _no(ctx, f"`{name}` is used at {unit.where(found.start())} without a "
                       "subscript: its layout is seen there", found.start())
        outer = sub.parent
        while outer is not None and outer.type == "parenthesized_expression":
            outer = outer.parent
        if outer is not None and outer.type == "pointer_expression" and \
                operator_of(outer) == "&":
            return _no(ctx, f"`{snippet(text_of(src, outer))}` ({unit.where(outer.start_byte)}) "
                       f"takes an address in `{name}`", outer.start_byte)
        index = sub.child_by_field_name("indices") or sub.child_by_field_name("index")
        if index is None:
            return _no(ctx, f"`{snippet(text_of(src, sub))}`: no index", sub.start_byte)
        if index.type == "subscript_argument_list":
            args = index.named_children
            if len(args) != 1:
                return _no(ctx, f"`{snippet(text_of(src, sub))}` has several indices",
                           sub.start_byte)
            index = args[0]
        uses += 1
        terms = _terms(index)
        prods = [t for t in terms if _pitch_product(ctx, t, c_text, c_value, pad)]
        rows = [a for t in terms if (a := _row_alias(ctx, t, c_text, c_value, pad)) is not None]
        shape_ok = (len(prods) == 1 and not rows and (
            len(terms) <= 2 or (len(terms) == 3 and terms[0] is prods[0]))) \
            or (len(rows) == 1 and not prods and len(terms) == 2)
        if not shape_ok:
            return _no(ctx, f"`{snippet(text_of(src, sub))}` ({unit.where(sub.start_byte)}) "
                       f"is not a row of pitch {pitch} plus a column",
                       sub.start_byte)
        for a in rows:
            aliases[a] = aliases.get(a, 0) + 1
    if not uses:
        return _no(ctx, f"`{name}` is never used", tile.start)
    for a, n in aliases.items():
        count = sum(1 for m in re.finditer(rb"(?<![\w.>])" + re.escape(a.encode()) + rb"\b",
                                           src[tile.end:fn.body_end]))
        if count != n + 1:  # its declaration and the tile's indices
            return _no(ctx, f"the row offset `{a}` is read elsewhere than in `{name}`'s "
                       "indices", tile.start)
    return _yes(f"every use of `{name}` ({uses}) is a row of pitch {pitch} plus a column",
                tile.start)


@predicate("row_pitch", _metavar("$P"), _metavar("$C"), reads=("arguments", "spec"))
def row_pitch(ctx: GuardContext, p: Binding, c: Binding) -> Verdict:
    """$P is the padded row pitch $C + 1: written so, or a constant equal to it."""
    node, cnode = binding_node(p), binding_node(c)
    if node is None or cnode is None:
        return _no(ctx, f"{quoted(p)} is not one expression", p.start)
    if _is_pitch(ctx, node, _squeeze(c.text), _value(ctx, cnode)):
        return _yes(f"{quoted(p)} is {c.text.strip()} + 1", p.start)
    return _no(ctx, f"{quoted(p)} is not {c.text.strip()} + 1", p.start)


@predicate("tile_row_offset", _metavar("$L"), _metavar("$TILE"),
           reads=("arguments", "declarations"))
def tile_row_offset(ctx: GuardContext, local: Binding, tile: Binding) -> Verdict:
    """The local $L is read only as a term of $TILE's indices (``t[L + c]``): a row offset
    of the tile, which a change of the tile's pitch may change with it."""
    fn = ctx.function
    if fn is None:
        return _no(ctx, f"{quoted(local)} is not in a function", local.start)
    unit, src = ctx.unit, ctx.unit.source
    name, tname = local.text.strip(), tile.text.strip()
    reads = 0
    for m in re.finditer(rb"(?<![\w.>])" + re.escape(name.encode()) + rb"\b", src[:fn.body_end]):
        if m.start() < local.end:
            continue
        node = unit.root.descendant_for_byte_range(m.start(), m.end())
        if node is None or node.type != "identifier" or node.start_byte != m.start():
            continue
        top = node
        while top.parent is not None and (top.parent.type == "parenthesized_expression" or (
                top.parent.type == "binary_expression" and operator_of(top.parent) == "+")):
            top = top.parent
        sub = top.parent
        if sub is not None and sub.type == "subscript_argument_list":
            sub = sub.parent
        arr = sub.child_by_field_name("argument") if sub is not None and \
            sub.type == "subscript_expression" else None
        if arr is None or text_of(src, unparen(arr)) != tname:
            return _no(ctx, f"`{name}` is read at {unit.where(m.start())}, not as a row offset "
                       f"of `{tname}`", m.start())
        reads += 1
    if not reads:
        return _no(ctx, f"`{name}` is never read as a row offset of `{tname}`", local.start)
    return _yes(f"`{name}` is read only as a row offset of `{tname}` ({reads} times)", local.start)
