"""Guard predicates for register blocking a tiled matrix product along y
(passes/matmul_regblock.rule): the block keeps fewer thread rows, each thread computes TM
rows, and every row it computes is named again by shadowing the row variable. They prove
that the block's y extent is what the tile needs, that the code the rewrite keeps reads the
thread's row only through that variable, and that the code before the product does nothing
that depends on how many threads run it."""

from __future__ import annotations

import re
from typing import Any

from klc.analysis.constants import block_dims, number_arg
from klc.analysis.declarations import lookup
from klc.analysis.launch import is_linear_index
from klc.analysis.tree import (
    binding_node,
    cited,
    in_span,
    nodes_of,
    snippet,
    text_of,
    unparen,
)
from klc.analysis.types import INTEGERS, norm_type
from klc.analysis.writes import is_assigned
from klc.guards.columns import _IMPURE
from klc.guards.launch import top_level_statement
from klc.guards.registry import (
    ArgSpec,
    GuardContext,
    Verdict,
    _metavar,
    _no,
    _region,
    _region_arg,
    _yes,
    predicate,
)
from klc.match import Binding

# the thread's y position: threadIdx.y, blockDim.y (which a launch edit changes), or the
# whole built-in (`dim3 t = threadIdx;`); threadIdx.x, blockIdx and gridDim keep their values
_Y_BUILTIN = re.compile(r"\b(threadIdx|blockDim)\b(?!\s*\.\s*x\b)")


def _y_dependence(ctx: GuardContext, start: int, end: int, row: str, inner: tuple[int, int],
                  seen: set[int], depth: int = 0) -> str | None:
    """Why the code in [start, end) may read the thread's y position other than through
    the name ``row``; names declared inside ``inner`` (the code checked) are followed by
    their text being in it. None when it cannot."""
    src = ctx.unit.source
    fn = ctx.function
    assert fn is not None
    text = src[start:end].decode("utf-8", "replace")
    found = _Y_BUILTIN.search(text)
    if found:
        return f"`{snippet(text)}` reads `{found.group(1)}` other than its x field"
    if depth > 16:
        return f"`{snippet(text)}`: the definitions are too deeply nested"
    for name, ident in _identifiers_in(ctx, start, end):
        if depth > 0 and name == row:
            return f"`{snippet(text)}` reads `{row}`, whose value the rewrite changes"
        if name == row:
            continue
        decl = lookup(ctx, name, ident.start_byte)
        if decl is None or decl.origin != "local":
            continue  # parameters, globals, #defines: the same for every thread row
        if inner[0] <= decl.start < inner[1]:
            continue  # declared in the code checked: its initialiser is part of the text
        if decl.start in seen:
            continue
        where = cited(ctx.unit, decl.start, decl.end)
        if decl.reference or decl.init is None or "__shared__" in decl.qualifiers:
            return f"`{name}` is not a local set once from its initialiser ({where})"
        if is_assigned(ctx, name, decl.end, fn.body_end):
            return f"`{name}` is assigned after its declaration ({where})"
        seen.add(decl.start)
        why = _y_dependence(ctx, decl.init.start_byte, decl.init.end_byte, row, inner, seen,
                            depth + 1)
        if why is not None:
            return f"`{name}` = `{snippet(text_of(src, decl.init))}`: {why}"
    return None


def _is_y_index(ctx: GuardContext, node: Any) -> bool:
    """``blockIdx.y * blockDim.y + threadIdx.y``: terms and factors in any order, casts and
    parentheses aside."""
    return is_linear_index(node, ctx.unit.source, "y")


def _identifiers_in(ctx: GuardContext, start: int, end: int) -> list[tuple[str, Any]]:
    src = ctx.unit.source
    return [(text_of(src, n), n) for n in in_span(nodes_of(ctx.unit, "identifier"), start, end)]


@predicate("row_only_via", _metavar("$ROW"), ArgSpec("$X", frozenset({"metavar", "sequence"})),
           reads=("arguments", "declarations"))
def row_only_via(ctx: GuardContext, row: Binding, x: Binding) -> Verdict:
    """$ROW names a local of an integer type (``int``, ``unsigned``, ``size_t``, ``long``,
    ...: the rewrite declares its rows in that type, ``elem_type($ROW, ?rt)``) initialised
    to ``blockIdx.y * blockDim.y + threadIdx.y`` and never assigned, and the code $X (an
    expression or statements) depends on the thread's y position only through that name:
    it reads no `threadIdx` or `blockDim` other than their x fields, and every local it
    reads that is declared outside the anchor (other than $ROW) is set once from an
    initialiser that passes the same test and does not read $ROW. A rewrite that declares
    $ROW again around $X (one value per row the thread computes) then makes $X compute for
    that row."""
    fn = ctx.function
    src = ctx.unit.source
    node = binding_node(row)
    if node is None or fn is None or unparen(node).type != "identifier":
        return _no(ctx, f"{snippet(row.text)} is not a plain name in a function", row.start)
    name = text_of(src, unparen(node))
    decl = lookup(ctx, name, row.start + 1)
    if decl is None or decl.origin != "local" or decl.init is None:
        return _no(ctx, f"`{name}` is not a local variable with an initialiser", row.start)
    where = cited(ctx.unit, decl.start, decl.end)
    if decl.pointer or decl.reference or decl.dims or norm_type(decl.base) not in INTEGERS:
        return _no(ctx, f"`{name}` is not declared of an integer type ({where}): the rows the "
                   "rewrite declares take the row's type, and index with it", row.start)
    if is_assigned(ctx, name, decl.end, fn.body_end):
        return _no(ctx, f"`{name}` is assigned after its declaration ({where})", row.start)
    if not _is_y_index(ctx, decl.init):
        return _no(ctx, f"`{name}` is not initialised to blockIdx.y * blockDim.y + threadIdx.y "
                   f"({where}): its step must be the block's y extent", row.start)
    why = _y_dependence(ctx, x.start, x.end, name, (ctx.match.start, ctx.match.end), set())
    if why is not None:
        return _no(ctx, f"{snippet(x.text)} may read the thread's row other than through "
                   f"`{name}`: {why} ({ctx.unit.where(x.start)})", x.start)
    return _yes(f"{snippet(x.text)} reads the thread's row only through `{name}`", x.start)


@predicate("pure_prefix", _region_arg(), reads=("position",))
def pure_prefix(ctx: GuardContext, region: str = "anchor") -> Verdict:
    """Every statement of the kernel body before REGION (which starts at the top level of
    the body) declares locals whose initializers read no memory, call nothing and assign
    nothing, or a ``__shared__`` array (storage of the block, no code a thread runs): run
    by fewer threads (a launch edit that shrinks the block), it changes nothing anyone
    sees."""
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, _end, label = span
    fn = ctx.function
    unit, src = ctx.unit, ctx.unit.source
    if fn is None:
        return _no(ctx, f"{label} is not inside a function")
    top = top_level_statement(unit, fn, start)
    if top is None:
        return _no(ctx, f"{label} is not at the top level of `{fn.name}`'s body", start)
    for stmt in top[1].named_children:
        if stmt.start_byte >= start:
            break
        if stmt.type == "comment":
            continue
        if stmt.type != "declaration":
            return _no(ctx, f"`{snippet(text_of(src, stmt))}` ({unit.where(stmt.start_byte)}) "
                       f"comes before {label} and is not a declaration", stmt.start_byte)
        words = text_of(src, stmt)
        if re.search(r"\b__shared__\b", words) and "=" not in words \
                and not re.search(r"\b(static|extern|__device__|__constant__)\b", words):
            continue  # a block's shared array: storage, nothing a thread runs
        if re.search(r"\b(static|extern|__shared__|__device__|__constant__)\b", words):
            return _no(ctx, f"`{snippet(words)}` ({unit.where(stmt.start_byte)}) declares "
                       "storage that is not a thread's local", stmt.start_byte)
        for kind, what in _IMPURE.items():
            for sub in in_span(nodes_of(unit, kind), stmt.start_byte, stmt.end_byte):
                return _no(ctx, f"`{snippet(words)}` ({unit.where(stmt.start_byte)}) {what}: "
                           f"`{snippet(text_of(src, sub))}`", sub.start_byte)
    return _yes(f"the code before {label} only declares locals from values that read no "
                "memory", start)


@predicate("block_y_tiles", ArgSpec("TILE", frozenset({"int", "hole"})),
           ArgSpec("TM", frozenset({"int", "hole"})), reads=("spec",), pass_only=True)
def block_y_tiles(ctx: GuardContext, tile: Any, tm: Any) -> Verdict:
    """For simplifications: the block's y extent is known exactly (spec or every launch)
    and TM of it make TILE, so that block.y *= TM gives TILE thread rows. Pass-only (the
    inverse skill checks `block_dim(y, ==, TILE)` before its launch edit divides it)."""
    t, m = number_arg(ctx, tile), number_arg(ctx, tm)
    if not isinstance(t, int) or not isinstance(m, int):
        return _no(ctx, f"block_y_tiles: {tile!r} or {tm!r} is not an integer")
    exact, _bound, how = block_dims(ctx)
    if exact is None:
        return _no(ctx, f"the exact block shape is unknown: {how}")
    if exact[1] * m != t:
        return _no(ctx, f"block.y is {exact[1]} ({how}): {m} of it do not make {t}")
    return _yes(f"block.y = {exact[1]} ({how}), {m} x {exact[1]} = {t}", ctx.match.start)


@predicate("block_in_spec", reads=("spec",))
def block_in_spec(ctx: GuardContext) -> Verdict:
    """The kernel's block is known exactly from its klc-spec's `block`: a `rewrite launch`
    edit of the block is recorded there (it is never made at a host launch; a kernel whose
    block only a host launch gives would keep its old block while its code expects the new
    one)."""
    exact, _bound, how = block_dims(ctx)
    if exact is None or not how.startswith("the spec's block"):
        return _no(ctx, f"the block is not given by a klc-spec ({how}): the launch edit "
                   "could not be recorded", ctx.match.start)
    return _yes(f"the block is {list(exact)} ({how})", ctx.match.start)
