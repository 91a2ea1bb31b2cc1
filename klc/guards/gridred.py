"""Guard predicates for a reduction that one block does alone and a grid of blocks may share
(passes/grid_reduce.rule): the grid's extent, and a loop body whose values are the same in
every thread but for the loop's own index."""

from __future__ import annotations

from typing import Any

from tree_sitter import Node

from klc.analysis.constants import (
    block_dims,
    constant_of,
    kernel_spec,
    launch_block,
    number_arg,
    spec_dims,
    spec_for,
)
from klc.analysis.declarations import function_declarations, lookup
from klc.analysis.launch import thread_dependent
from klc.analysis.tree import names_in, quoted
from klc.guards.launch import compare_extent
from klc.guards.registry import (
    ArgSpec,
    GuardContext,
    Verdict,
    _metavar,
    _no,
    _yes,
    predicate,
)
from klc.match import Binding


def _grid_dims(ctx: GuardContext) -> tuple[tuple[int, int, int] | None, str]:
    """(the grid's exact extents, how known): the spec's ``grid``, or every launch of the
    kernel in this file agreeing on a constant grid."""
    fn = ctx.function
    if fn is None:
        return None, "the match is not inside a function"
    inner = kernel_spec(spec_for(ctx))
    grid = inner.grid if inner is not None else ()
    if grid:
        dims = spec_dims(ctx, tuple(grid))
        if dims is not None:
            return dims, f"the spec's grid {list(grid)}"
        return None, f"the spec's grid {list(grid)} has no value at every size"
    launches = [lc for lc in ctx.unit.launches if lc.kernel == fn.name and lc.config]
    if not launches:
        return None, f"no spec grid and no launch of `{fn.name}` in this file"
    found = {launch_block(ctx, lc.config[0], lc.start) for lc in launches}
    if len(found) == 1 and None not in found:
        dims = found.pop()
        assert dims is not None
        return dims, f"the launch at {ctx.unit.where(launches[0].start)}"
    return None, f"the launches of `{fn.name}` give no one constant grid"


@predicate("grid_dim", ArgSpec("axis", frozenset({"name"}), frozenset({"x", "y", "z"})),
           ArgSpec("op", frozenset({"op", "string"})),
           ArgSpec("N", frozenset({"int", "hole"})), reads=("spec",))
def grid_dim(ctx: GuardContext, axis: str, op: str, n: Any) -> Verdict:
    """The grid's extent along AXIS (x, y or z) compares with N, known exactly (the spec's
    grid, or every launch of the kernel in this file): ``grid_dim(x, ==, 1)`` for a kernel
    that one block runs alone."""
    exact, how = _grid_dims(ctx)
    return compare_extent(ctx, "grid", exact, how, axis, op, n)


def _nodes_of(b: Binding) -> list[Node]:
    """The nodes a binding holds: a run's, or the one node of ``$X``."""
    if b.nodes:
        return list(b.nodes)
    node = getattr(b, "node", None)
    return [node] if node is not None else []


def _loop_of(nodes: list[Node], src: bytes, iname: str) -> Node | None:
    """The ``for`` statement around ``nodes`` whose initializer declares ``iname``."""
    n = nodes[0] if nodes else None
    while n is not None:
        if n.type == "for_statement":
            init = n.child_by_field_name("initializer")
            if init is not None and any(w == iname for w, _ in names_in(init, src)):
                return n
        n = n.parent
    return None


@predicate("uniform_but", ArgSpec("$$$S", frozenset({"metavar", "sequence"})),
           _metavar("$I"), _metavar("$A"), reads=("arguments", "declarations"))
def uniform_but(ctx: GuardContext, stmts: Binding, i: Binding, a: Binding) -> Verdict:
    """Every variable that the code bound to $$$S reads, but the names $I (the loop's index)
    and $A (the sum it adds to), holds the same value in every thread of the block: none
    is a variable of the function whose value may come from threadIdx (directly or through
    other variables, a loop from threadIdx included). When the code lies in the ``for``
    loop that declares $I, the whole loop (its condition, step and body) is judged, and the
    variables the loop body declares count as its own (judged through what they are set
    from). With ``thread_free($$$S)`` (no thread or block built-in in the code itself), an
    iteration computes the same thing whichever thread of whichever block runs it, given
    the same $I."""
    fn = ctx.function
    if fn is None:
        return _no(ctx, "the match is not inside a function")
    src = ctx.unit.source
    iname, aname = i.text.strip(), a.text.strip()
    nodes = _nodes_of(stmts)
    at = nodes or [ctx.unit.root.descendant_for_byte_range(stmts.start, stmts.end)]
    loop = _loop_of([n for n in at if n is not None], src, iname)
    if loop is not None:
        nodes = [c for f in ("condition", "update", "body")
                 if (c := loop.child_by_field_name(f)) is not None]
    what = f"the loop over `{iname}`" if loop is not None else quoted(stmts)
    if not nodes:
        return _yes(f"{what} reads nothing", stmts.start)
    lo, hi = min(n.start_byte for n in nodes), max(n.end_byte for n in nodes)
    tainted = thread_dependent(ctx, fn)
    decls = function_declarations(ctx.unit, fn)
    own = {d.name for d in decls if lo <= d.start < hi}
    outer = {d.name for d in decls if not (lo <= d.start < hi)}
    for node in nodes:
        for name, _n in names_in(node, src):
            if name in (iname, aname) or (name in own and name not in outer):
                continue
            if name in tainted:
                return _no(ctx, f"{what} reads `{name}`, which may differ between "
                           f"threads (`{tainted[name]}`)", stmts.start)
    return _yes(f"{what} reads no thread-dependent variable but `{iname}`",
                stmts.start)


@predicate("reads_first_only", ArgSpec("$$$S", frozenset({"metavar", "sequence"})),
           _metavar("$A"), reads=("arguments",))
def reads_first_only(ctx: GuardContext, stmts: Binding, a: Binding) -> Verdict:
    """Every use of the array $A (a plain name) in the code bound to $$$S is its first
    element, ``$A[0]``: an epilogue that reads a block reduction's result cell and nothing
    else of the shared array (a rewrite may then put another total in that cell alone)."""
    src = ctx.unit.source
    name = a.text.strip()
    for node in _nodes_of(stmts):
        for word, n in names_in(node, src):
            if word != name:
                continue
            parent = n.parent
            index = None
            if parent is not None and parent.type == "subscript_expression" and \
                    parent.child_by_field_name("argument") == n:
                index = parent.child_by_field_name("indices") or \
                    parent.child_by_field_name("index")
            text = src[index.start_byte:index.end_byte].decode() if index is not None else ""
            if text.strip("[] \t") != "0":
                return _no(ctx, f"{quoted(stmts)} uses `{name}` other than as `{name}[0]` "
                           f"(at {ctx.unit.where(n.start_byte)})", stmts.start)
    return _yes(f"{quoted(stmts)} reads only `{name}[0]`", stmts.start)


@predicate("block_dim_power_of_two",
           ArgSpec("axis", frozenset({"name"}), frozenset({"x", "y", "z"})), reads=("spec",))
def block_dim_power_of_two(ctx: GuardContext, axis: str) -> Verdict:
    """The block's extent along AXIS is a power of two, known exactly (the spec's block, or
    every launch in this file): a halving tree (``for (k = blockDim.x / 2; k > 0; k >>= 1)``)
    then adds every thread's value into the first cell, the same sum whatever the data."""
    exact, _bound, how = block_dims(ctx)
    if exact is None:
        return _no(ctx, f"the block's {axis} extent is not known exactly: {how}")
    have = exact["xyz".index(axis)]
    if have > 0 and have & (have - 1) == 0:
        return _yes(f"block.{axis} = {have}, a power of two ({how})", ctx.match.start)
    return _no(ctx, f"block.{axis} is {have} ({how}), not a power of two")


@predicate("size_at_most", _metavar("$N"), ArgSpec("LIMIT", frozenset({"int"})),
           reads=("arguments", "declarations", "spec"))
def size_at_most(ctx: GuardContext, n: Binding, limit: Any) -> Verdict:
    """$N is at most LIMIT wherever the kernel runs: a compile-time constant, or a kernel
    parameter that the spec sizes (``sizes``, and every ``verify_sizes`` entry; sizes the
    gate derives are never larger than the profiling size). A loop bound the spec keeps far
    below INT_MAX leaves room for a longer int stride."""
    want = number_arg(ctx, limit)
    if not isinstance(want, int):
        return _no(ctx, f"size_at_most: {limit!r} is not an integer")
    v, why, _definite, _sources = constant_of(ctx, n)
    if isinstance(v, int):
        if v <= want:
            return _yes(f"{quoted(n)} = {v} <= {want}", n.start)
        return _no(ctx, f"{quoted(n)} = {v} > {want}", n.start)
    name = n.text.strip()
    decl = lookup(ctx, name, n.start)
    inner = kernel_spec(spec_for(ctx))
    if decl is None or decl.origin != "parameter" or inner is None or name not in inner.sizes:
        return _no(ctx, f"{quoted(n)} is neither a known constant ({why}) nor a parameter "
                   "that the spec's sizes give", n.start)
    values = [int(inner.sizes[name])] + [int(s[name]) for s in inner.verify_sizes
                                         if name in s]
    top = max(values)
    if top <= want:
        return _yes(f"{quoted(n)} is at most {top} (the spec's sizes) <= {want}", n.start)
    return _no(ctx, f"{quoted(n)} reaches {top} (the spec's sizes), more than {want}", n.start)


@predicate("subscripted_only", _metavar("$A"), reads=("arguments", "declarations"))
def subscripted_only(ctx: GuardContext, a: Binding) -> Verdict:
    """The array $A (a plain name) is used in its function only as ``$A[...]`` with its
    address never taken (no ``&$A[i]``, no ``p = $A``, no call given it), besides its own
    declaration: no other name reaches its cells, so what the code reads of it is what its
    subscripts say."""
    fn = ctx.function
    if fn is None:
        return _no(ctx, "the match is not inside a function")
    src = ctx.unit.source
    name = a.text.strip()
    body = ctx.unit.root.descendant_for_byte_range(fn.body_start, fn.body_end)
    if body is None:
        return _no(ctx, "the function has no body")
    for word, n in names_in(body, src):
        if word != name:
            continue
        parent = n.parent
        if parent is not None and parent.type in ("array_declarator", "init_declarator",
                                                  "declaration") and \
                parent.child_by_field_name("declarator") == n:
            continue
        if parent is not None and parent.type == "subscript_expression" and \
                parent.child_by_field_name("argument") == n:
            up = parent.parent
            while up is not None and up.type in ("subscript_expression",
                                                 "parenthesized_expression"):
                up = up.parent
            if up is not None and up.type == "pointer_expression" and \
                    src[up.start_byte:up.start_byte + 1] == b"&":
                return _no(ctx, f"the address of `{name}[...]` is taken "
                           f"(at {ctx.unit.where(n.start_byte)})", a.start)
            continue
        return _no(ctx, f"`{name}` is used other than subscripted "
                   f"(at {ctx.unit.where(n.start_byte)})", a.start)
    return _yes(f"`{name}` is only used subscripted", a.start)
