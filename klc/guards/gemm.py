"""Guard predicates for matrix products that a rewrite tiles across a 2-D block
(passes/matmul_tiles.rule's inverse): which thread index a row or column is, which threads
of the block compute the same value of an operand read, and whether a variable's
declaration may move out of the block it stands in."""

from __future__ import annotations

from tree_sitter import Node

from klc.analysis.constants import Evaluator
from klc.analysis.declarations import lookup
from klc.analysis.launch import field_of, index_factors, strip_casts
from klc.analysis.tree import (
    binding_node,
    cited,
    in_span,
    names_in,
    nodes_of,
    quoted,
    snippet,
    text_of,
    unparen,
)
from klc.analysis.writes import is_assigned, set_once
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

_AXES = frozenset({"x", "y", "z"})
_BLOCK_UNIFORM = frozenset({"blockIdx", "blockDim", "gridDim"})
# expressions whose value is not a pure function of the names they read (a call may read the
# thread's index or memory; an assignment or increment changes what the next thread reads)
_IMPURE = ("call_expression", "assignment_expression", "update_expression", "subscript_expression",
           "pointer_expression", "lambda_expression", "new_expression", "delete_expression")


def _uniform_factor(ctx: GuardContext, node: Node, axis: str) -> bool:
    """``blockDim.<axis>`` or a value every thread of the block shares (a constant, a
    parameter never assigned, a block-uniform local): the size of a block's step along the
    axis."""
    if field_of(node, ctx.unit.source, "blockDim", axis):
        return True
    return _varies_why(ctx, node, set(), set()) is None


def _descendants(node: Node) -> list[Node]:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(n.children)
    return out


def _is_axis_index(ctx: GuardContext, node: Node, axis: str) -> bool:
    """``blockIdx.a * F + threadIdx.a`` (terms and factors in any order, casts allowed), F
    ``blockDim.a`` or a block-uniform value."""
    src = ctx.unit.source
    return any(field_of(bid, src, "blockIdx", axis) and _uniform_factor(ctx, step, axis)
               for bid, step in index_factors(node, src, axis))


@predicate("thread_index", _metavar("$E"), ArgSpec("axis", frozenset({"name"}), _AXES),
           reads=("arguments", "declarations"))
def thread_index(ctx: GuardContext, e: Binding, axis: str) -> Verdict:
    """$E is the thread's global index along AXIS, ``blockIdx.a * blockDim.a + threadIdx.a``
    (the step may be a block-uniform value such as a TILE constant; operands in any order,
    casts allowed), or a local variable of integer type initialised to it and never
    reassigned: the threads of a block with the same threadIdx.a have the same $E, and it
    depends on no other thread index."""
    node = binding_node(e)
    src = ctx.unit.source
    fn = ctx.function
    if node is None or fn is None:
        return _no(ctx, f"{quoted(e)} is not an expression in a function", e.start)
    if _is_axis_index(ctx, node, axis):
        return _yes(f"{quoted(e)} is the thread's global {axis} index", e.start)
    bare = strip_casts(node, src)
    if bare.type != "identifier":
        return _no(ctx, f"{quoted(e)} is not blockIdx.{axis} * blockDim.{axis} + "
                   f"threadIdx.{axis} ({ctx.unit.where(e.start)})", e.start)
    name = text_of(src, bare)
    decl, why = set_once(ctx, name, e.start)
    if decl is None or decl.origin != "local" or decl.init is None:
        return _no(ctx, f"`{name}` is not a local initialised to the thread's global {axis} "
                   f"index", e.start)
    where = cited(ctx.unit, decl.start, decl.end)
    if decl.pointer or decl.reference or decl.base in ("float", "double", "half", "auto"):
        return _no(ctx, f"`{name}` is not an integer ({where})", e.start)
    if not _is_axis_index(ctx, decl.init, axis):
        return _no(ctx, f"`{name}` is not initialised to blockIdx.{axis} * blockDim.{axis} + "
                   f"threadIdx.{axis} ({where})", e.start)
    if why:
        return _no(ctx, f"`{name}` is initialised to the thread's global {axis} index but "
                   f"{why}", e.start)
    return _yes(f"`{name}` = the thread's global {axis} index ({where})", e.start)


def _varies_why(ctx: GuardContext, node: Node, allowed: set[tuple[str, int]],
                seen: set[int], depth: int = 0) -> str | None:
    """Why the value of ``node`` may differ between two threads that agree on the
    variables in ``allowed`` ((name, declaration start)); None when it cannot."""
    src = ctx.unit.source
    fn = ctx.function
    assert fn is not None
    text = text_of(src, node)
    if depth > 16:
        return f"`{snippet(text)}`: the definitions are too deeply nested"
    if "threadIdx" in text or "__shfl" in text or "laneid" in text or "__lane_id" in text:
        return f"`{snippet(text)}` reads the thread's index"
    for n in _descendants(node):
        if n.type in _IMPURE:
            return f"`{snippet(text_of(src, n))}` is a call, a memory read or a side effect " \
                   "(its value cannot be told from the names it reads)"
    for name, ident in names_in(node, src):
        if name in _BLOCK_UNIFORM:
            continue
        decl = lookup(ctx, name, ident.start_byte)
        if decl is None:
            if isinstance(Evaluator(ctx).node(ident, src), int):
                continue  # a #define'd or otherwise folded integer constant
            return f"`{name}` is neither a variable nor a known constant"
        if (name, decl.start) in allowed or (depth == 0 and name in {n for n, _ in allowed}):
            continue  # (in $E itself, the matched code: the name is the metavariable's)
        if decl.start in seen:
            continue
        if decl.reference:
            return f"`{name}` is a reference ({cited(ctx.unit, decl.start, decl.end)})"
        if decl.origin == "parameter":
            if is_assigned(ctx, name, fn.body_start, fn.body_end):
                return f"parameter `{name}` is assigned in `{fn.name}`"
            continue
        if decl.origin == "global":
            if decl.const or "constexpr" in decl.qualifiers or "__constant__" in decl.qualifiers:
                continue
            return f"`{name}` is a global variable that may change"
        if "__shared__" in decl.qualifiers or decl.init is None or decl.dims:
            return f"`{name}` is not a local set once from its initialiser " \
                   f"({cited(ctx.unit, decl.start, decl.end)})"
        if is_assigned(ctx, name, decl.end, fn.body_end):
            return f"`{name}` is assigned after its declaration " \
                   f"({cited(ctx.unit, decl.start, decl.end)})"
        seen.add(decl.start)
        why = _varies_why(ctx, decl.init, allowed, seen, depth + 1)
        if why is not None:
            return f"`{name}` = `{snippet(text_of(src, decl.init))}`: {why}"
    return None


@predicate("varies_only_with", _metavar("$E"), ArgSpec("$A", frozenset({"metavar"}),
                                                       optional=True),
           ArgSpec("$B", frozenset({"metavar"}), optional=True),
           reads=("arguments", "declarations"))
def varies_only_with(ctx: GuardContext, e: Binding, a: Binding | None = None,
                     b: Binding | None = None) -> Verdict:
    """Two threads of a block that agree on the variables $A and $B (plain names; none
    given: any two threads) compute the same value of $E: it reads no thread index, calls
    nothing, reads no memory and changes nothing; every other name in it is a block-uniform
    built-in (blockIdx, blockDim, gridDim), a constant, a parameter never assigned, or a
    local set once from an initialiser that passes the same test (row pointers such as
    ``const float* a = A + row * K;``)."""
    fn = ctx.function
    node = binding_node(e)
    src = ctx.unit.source
    if node is None or fn is None:
        return _no(ctx, f"{quoted(e)} is not an expression in a function", e.start)
    allowed: set[tuple[str, int]] = set()
    names = []
    for m in (a, b):
        if m is None:
            continue
        mnode = binding_node(m)
        if mnode is None or unparen(mnode).type != "identifier":
            return _no(ctx, f"{quoted(m)} is not a plain name", m.start)
        name = text_of(src, unparen(mnode))
        decl = lookup(ctx, name, m.start + 1)
        if decl is None:
            return _no(ctx, f"`{name}` is not a declared variable", m.start)
        allowed.add((name, decl.start))
        names.append(f"`{name}`")
    why = _varies_why(ctx, node, allowed, set())
    given = " and ".join(names) if names else "nothing"
    if why is not None:
        return _no(ctx, f"{quoted(e)} may differ between threads that agree on {given}: {why} "
                   f"({ctx.unit.where(e.start)})", e.start)
    return _yes(f"{quoted(e)} is the same for threads that agree on {given}", e.start)


@predicate("used_only_in", _metavar("$X"), _region_arg(optional=False),
           reads=("arguments", "position"))
def used_only_in(ctx: GuardContext, x: Binding, region: str) -> Verdict:
    """The name $X bound is used nowhere in the enclosing function outside REGION (neither
    this variable nor another of the same name, nor a parameter): a rewrite may move its
    declaration out of the block REGION declares it in without a clash or a shadowing."""
    fn = ctx.function
    node = binding_node(x)
    src = ctx.unit.source
    if node is None or fn is None or unparen(node).type != "identifier":
        return _no(ctx, f"{quoted(x)} is not a plain name in a function", x.start)
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    name = text_of(src, unparen(node))
    if fn.param(name) is not None:
        return _no(ctx, f"`{name}` is also a parameter of `{fn.name}`", x.start)
    for ident in in_span(nodes_of(ctx.unit, "identifier"), fn.body_start, fn.body_end):
        if (ident.start_byte < start or ident.start_byte >= end) and text_of(src, ident) == name:
            return _no(ctx, f"`{name}` is also used outside {label} "
                       f"({ctx.unit.where(ident.start_byte)})", ident.start_byte)
    return _yes(f"`{name}` is used only in {label}", x.start)
