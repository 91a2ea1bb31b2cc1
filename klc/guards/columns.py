"""Guard predicates for column reductions (passes/column_reduce.rule and its inverse): a
one-thread-per-column kernel whose row loop is split over the rows of a two-dimensional
block, the partial sums combined through shared memory after one barrier.

- ``pure_declarations($$$S)``: the statements only declare locals from values that read
  no memory, call nothing and assign nothing (safe to run for an out-of-range column too);
- ``declares_zero($$$S, $A)``: they declare ``$A`` with a zero initializer (a sum split
  over threads counts its starting value once per thread);
- ``no_stores($$$S)``: the statements write no memory at all;
- ``block_split(?f, ?ty)``: the block is one-dimensional, known exactly, its x extent a
  multiple of ?f and x / ?f * ?ty <= 1024 (the launch that block.x /= ?f, block.y *= ?ty
  makes is valid);
- ``kernel_body(region)``: REGION spans the whole body of its kernel (no statement before
  or after it)."""

from __future__ import annotations

import re
from typing import Any

from klc.analysis.constants import block_dims, number_arg
from klc.analysis.tree import in_span, nodes_of, snippet, text_of
from klc.analysis.writes import writes_around
from klc.guards.registry import (
    ArgSpec,
    GuardContext,
    Verdict,
    _kernel_region,
    _metavar,
    _no,
    _region_arg,
    _yes,
    predicate,
)
from klc.match import Binding

_SEQ = frozenset({"metavar", "sequence"})
# what an initializer may not hold: a read of memory, a call, a side effect
_IMPURE = {"subscript_expression": "reads memory", "pointer_expression": "dereferences",
           "call_expression": "calls", "assignment_expression": "assigns",
           "update_expression": "increments", "new_expression": "allocates",
           "delete_expression": "frees", "gnu_asm_expression": "holds asm",
           "lambda_expression": "holds a lambda"}
_ZERO = re.compile(r"\(?\s*[+]?(0+|0*\.0*|0+\.?0*[eE][+-]?\d+)[uUlLfF]*\s*\)?")


def _stmts(b: Binding) -> list[Any]:
    return [n for n in b.nodes if n.type != "comment"]


@predicate("pure_declarations", ArgSpec("$$$S", _SEQ), reads=("arguments",))
def pure_declarations(ctx: GuardContext, stmts: Binding) -> Verdict:
    """Every statement bound to $$$S is a declaration of local variables whose initializers
    read no memory (no subscript, no ``*p``, no ``->``), call nothing and assign nothing:
    run by a thread whose column is out of range, or before a check it used to follow,
    it touches nothing and computes what it computed."""
    unit, src = ctx.unit, ctx.unit.source
    for node in _stmts(stmts):
        if node.type != "declaration":
            return _no(ctx, f"`{snippet(text_of(src, node))}` ({unit.where(node.start_byte)}) "
                       "is not a declaration", node.start_byte)
        words = text_of(src, node)
        if re.search(r"\b(static|extern|__shared__|__device__|__constant__)\b", words):
            return _no(ctx, f"`{snippet(words)}` ({unit.where(node.start_byte)}) declares "
                       "storage that is not a thread's local", node.start_byte)
        for kind, what in _IMPURE.items():
            for sub in in_span(nodes_of(unit, kind), node.start_byte, node.end_byte):
                return _no(ctx, f"`{snippet(text_of(src, node))}` "
                           f"({unit.where(node.start_byte)}) {what}: "
                           f"`{snippet(text_of(src, sub))}`", sub.start_byte)
        for sub in in_span(nodes_of(unit, "field_expression"), node.start_byte, node.end_byte):
            if any(c.type == "->" for c in sub.children):
                return _no(ctx, f"`{snippet(text_of(src, sub))}` "
                           f"({unit.where(sub.start_byte)}) reads memory", sub.start_byte)
    return _yes("the statements only declare locals from values that read no memory",
                stmts.start)


@predicate("declares_zero", ArgSpec("$$$S", _SEQ), _metavar("$A"), reads=("arguments",))
def declares_zero(ctx: GuardContext, stmts: Binding, a: Binding) -> Verdict:
    """The statements bound to $$$S declare the variable $A with a zero initializer
    (``0``, ``0.0f``, ``0.0``, ``0u``; ``float s = 0, t = 0;`` declares both)."""
    unit, src = ctx.unit, ctx.unit.source
    name = a.text.strip()
    for node in _stmts(stmts):
        if node.type != "declaration":
            continue
        for d in node.named_children:
            if d.type != "init_declarator":
                continue
            target = d.child_by_field_name("declarator")
            value = d.child_by_field_name("value")
            if target is None or value is None or text_of(src, target).strip() != name:
                continue
            init = text_of(src, value).strip()
            if _ZERO.fullmatch(init):
                return _yes(f"`{name}` starts at {init} ({unit.where(d.start_byte)})",
                            d.start_byte)
            return _no(ctx, f"`{name}` starts at `{snippet(init)}` "
                       f"({unit.where(d.start_byte)}), not at zero", d.start_byte)
    return _no(ctx, f"`{name}` is not declared with an initializer in {stmts.text.strip()[:60]!r}",
               stmts.start)


@predicate("no_stores", ArgSpec("$$$S", _SEQ), reads=("arguments",))
def no_stores(ctx: GuardContext, stmts: Binding) -> Verdict:
    """The code bound to $$$S writes no memory: no store, update, atomic, asm, or call given
    a pointer (the dots' ``when not stores``). Its iterations may then be run by different
    threads in any order."""
    for s, e, _names, how in writes_around(ctx, stmts.start, stmts.end):
        if stmts.start <= s and e <= stmts.end:
            return _no(ctx, f"`{snippet(ctx.unit.source[s:e].decode(errors='replace'))}` "
                       f"({ctx.unit.where(s)}) {how}", s)
    return _yes(f"{stmts.text.strip()[:40]!r}... writes no memory", stmts.start)


@predicate("block_split", ArgSpec("F", frozenset({"int", "hole"})),
           ArgSpec("TY", frozenset({"int", "hole"})), reads=("spec",))
def block_split(ctx: GuardContext, f: Any, ty: Any) -> Verdict:
    """The block is one-dimensional and known exactly (spec or every launch), its x extent
    a multiple of F, x / F * TY <= 1024, and the kernel declares no __launch_bounds__ (which
    the new block could exceed): block.x /= F, block.y *= TY, grid.x *= F give a valid
    launch that numbers the same columns blockIdx.x * blockDim.x + threadIdx.x."""
    fv, tv = number_arg(ctx, f), number_arg(ctx, ty)
    if not isinstance(fv, int) or not isinstance(tv, int) or fv < 1 or tv < 1:
        return _no(ctx, f"block_split: {f!r}, {ty!r} are not positive integers")
    exact, _bound, how = block_dims(ctx)
    if exact is None:
        return _no(ctx, f"the exact block shape is unknown: {how}")
    x, y, z = exact
    if y != 1 or z != 1:
        return _no(ctx, f"the block is {x}×{y}×{z} ({how}), not one-dimensional")
    if x % fv:
        return _no(ctx, f"block.x = {x} ({how}) is not a multiple of {fv}")
    if x // fv * tv > 1024:
        return _no(ctx, f"a block of {x // fv}×{tv} threads would exceed 1024")
    fn = ctx.function
    if fn is not None and fn.launch_bounds is not None:
        return _no(ctx, f"`{fn.name}` declares __launch_bounds__({fn.launch_bounds.max_threads}):"
                   " the new block's shape is not checked against it (a launch with more "
                   "threads fails); remove it first")
    return _yes(f"block {x} ({how}) -> {x // fv}×{tv}", ctx.match.start)


@predicate("kernel_body", _region_arg(), reads=("position",))
def kernel_body(ctx: GuardContext, region: str = "anchor") -> Verdict:
    """REGION is the whole body of a kernel: its first statement is the body's first and
    nothing but comments follows it (no code before it sees the old block shape, none after
    it runs once more per row slice)."""
    span = _kernel_region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label, fn = span
    body = fn.node.child_by_field_name("body")
    if body is None or body.type != "compound_statement":
        return _no(ctx, f"the body of `{fn.name}` was not found")
    stmts = [c for c in body.named_children if c.type != "comment"]
    if not stmts:
        return _no(ctx, f"`{fn.name}` has an empty body")
    if stmts[0].start_byte != start:
        return _no(ctx, f"`{snippet(text_of(ctx.unit.source, stmts[0]))}` "
                   f"({ctx.unit.where(stmts[0].start_byte)}) comes before {label} in "
                   f"`{fn.name}`", stmts[0].start_byte)
    if stmts[-1].end_byte > end:
        return _no(ctx, f"`{snippet(text_of(ctx.unit.source, stmts[-1]))}` "
                   f"({ctx.unit.where(stmts[-1].start_byte)}) follows {label} in `{fn.name}`",
                   stmts[-1].start_byte)
    return _yes(f"{label} is the whole body of `{fn.name}`", start)


@predicate("block_y_is", ArgSpec("TY", frozenset({"int", "hole"})), reads=("spec",),
           pass_only=True)
def block_y_is(ctx: GuardContext, ty: Any) -> Verdict:
    """For simplifications: the block's y extent is known exactly (spec or every launch) and
    equals TY, so that block.y /= TY leaves one thread per column. A *pass-only* predicate:
    it speaks of the launch before the pass's launch edit, which the inverse skill's launch
    edit undoes (``klc learn`` leaves it out of the skill's guard; the skill checks
    ``block_split`` instead)."""
    want = number_arg(ctx, ty)
    if not isinstance(want, int):
        return _no(ctx, f"block_y_is: {ty!r} is not an integer")
    exact, _bound, how = block_dims(ctx)
    if exact is None:
        return _no(ctx, f"the exact block shape is unknown: {how}")
    if exact[1] != want:
        return _no(ctx, f"block.y is {exact[1]} ({how}), not {want}")
    return _yes(f"block.y = {want} ({how})", ctx.match.start)


def _row_times(node: Any, src: bytes, row: str) -> bool:
    """NODE (casts and parentheses aside) is ``row * s`` or ``s * row``."""
    from klc.analysis.launch import strip_casts
    from klc.analysis.tree import operator_of

    node = strip_casts(node, src)
    if node.type != "binary_expression" or operator_of(node) != "*":
        return False
    return any(strip_casts(c, src).type == "identifier"
               and text_of(src, strip_casts(c, src)) == row
               for c in (node.child_by_field_name("left"), node.child_by_field_name("right"))
               if c is not None)


def _row_plus_col(node: Any, src: bytes, row: str, col: str) -> bool:
    """NODE is ``row * s + col`` (either order, casts and parentheses aside)."""
    from klc.analysis.launch import strip_casts
    from klc.analysis.tree import operator_of

    node = strip_casts(node, src)
    if node.type != "binary_expression" or operator_of(node) != "+":
        return False
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None:
        return False
    for a, b in ((left, right), (right, left)):
        bare = strip_casts(b, src)
        if bare.type == "identifier" and text_of(src, bare) == col and _row_times(a, src, row):
            return True
    return False


@predicate("column_walk", ArgSpec("$$$S", _SEQ), _metavar("$E"), _metavar("$R"),
           _metavar("$C"), reads=("arguments",))
def column_walk(ctx: GuardContext, stmts: Binding, e: Binding, r: Binding,
                c: Binding) -> Verdict:
    """The loop body bound to $$$S, or the expression $E accumulated after it, reads memory
    down a column: some subscript's index is ``$R * s + $C`` (either order, casts allowed:
    ``x[(size_t)r * cols + c]``), or a row pointer declared in $$$S as ``base + $R * s`` is
    subscripted with ``[$C]``. $R is the row
    loop's variable and $C the thread's column: the loop walks a column (neighbouring
    threads read neighbouring addresses), not a thread's own row (``x[c * cols + r]``, a
    row kernel: thread_per_row_to_warp_per_row's shape)."""
    from klc.analysis.launch import strip_casts
    from klc.analysis.tree import operator_of

    unit, src = ctx.unit, ctx.unit.source
    row, col = r.text.strip(), c.text.strip()
    rows: set[str] = set()
    for d in in_span(nodes_of(unit, "init_declarator"), stmts.start, stmts.end):
        target, value = d.child_by_field_name("declarator"), d.child_by_field_name("value")
        if target is None or value is None:
            continue
        name = text_of(src, target).lstrip("*& \t").strip()
        v = strip_casts(value, src)
        if v.type == "binary_expression" and operator_of(v) == "+" and any(
                _row_times(ch, src, row) for ch in (v.child_by_field_name("left"),
                                                    v.child_by_field_name("right"))
                if ch is not None):
            rows.add(name)
    subs = [*in_span(nodes_of(unit, "subscript_expression"), stmts.start, stmts.end),
            *in_span(nodes_of(unit, "subscript_expression"), e.start, e.end)]
    for sub in subs:
        arr = sub.child_by_field_name("argument")
        idx = sub.child_by_field_name("indices") or sub.child_by_field_name("index")
        if idx is None:
            named = [ch for ch in sub.named_children if ch is not arr]
            idx = named[-1] if named else None
        if idx is not None and idx.type == "subscript_argument_list" and idx.named_child_count:
            idx = idx.named_children[0]
        if idx is None:
            continue
        if _row_plus_col(idx, src, row, col):
            return _yes(f"`{snippet(text_of(src, sub))}` ({unit.where(sub.start_byte)}) reads "
                        f"down a column", sub.start_byte)
        bare = strip_casts(idx, src)
        if arr is not None and text_of(src, arr).strip() in rows and bare.type == "identifier" \
                and text_of(src, bare) == col:
            return _yes(f"`{snippet(text_of(src, sub))}` ({unit.where(sub.start_byte)}) reads "
                        f"a row pointer at the column", sub.start_byte)
    return _no(ctx, f"no read at `{row} * s + {col}` (nor a row pointer `base + {row} * s` "
               f"read at `{col}`) in the loop: it does not walk down a column", stmts.start)
