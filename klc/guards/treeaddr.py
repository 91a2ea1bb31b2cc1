"""Guard predicates for a shared-memory tree's addressing (passes/tree_addressing.rule):
``tree_combine``, ``whole_block_tree``.

A block tree combines the block's B slots ``r[0..B)`` into ``r[0]``, one level per stride.
Interleaved addressing (``for (s = 1; s < B; s *= 2) if (t % (2 * s) == 0) r[t] += r[t + s];``,
the textbook first version) and sequential addressing (``for (s = B / 2; s > 0; s >>= 1) if
(t < s) r[t] += r[t + s];``) pair the slots differently, but both leave in ``r[0]`` the
combination of every slot once, when

- each level's statement combines the thread's slot with the slot ``s`` above it and nothing
  else (``tree_combine``): ``r[t] += r[t + s]``, or ``r[t] = OP(r[t], r[t + s])`` with OP a
  maximum or a minimum (``fmaxf``, ``max``, ``fminf``, ...), ``r`` a ``__shared__`` array;
  those operators are associative and commutative (a float sum up to rounding: the gate's
  tolerance judges it; maxima and minima exactly);
- the tree spans the whole one-dimensional block (``whole_block_tree``): B is ``blockDim.x``
  or a constant equal to the block's x extent, so the sequential tree's B / 2 threads exist
  and the interleaved one's threads reach no slot past B.

Sequential addressing keeps the working threads together (whole warps idle early instead
of every warp diverging) and replaces the ``%`` by a comparison.
"""

from __future__ import annotations

from tree_sitter import Node

from klc.analysis.constants import block_dims, constant_of
from klc.analysis.tree import quoted, text_of
from klc.guards.gridfold import FOLDS
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


def _one_statement(node: Node) -> Node | None:
    while node.type == "compound_statement":
        kids = [c for c in node.named_children if c.type != "comment"]
        if len(kids) != 1:
            return None
        node = kids[0]
    if node.type != "expression_statement" or not node.named_children:
        return None
    return node.named_children[0]


def _flat(src: bytes, node: Node | None) -> str:
    return "".join(text_of(src, node).split()) if node is not None else ""


@predicate("tree_combine", ArgSpec("$$$BODY", frozenset({"metavar", "sequence"})),
           _metavar("$T"),
           _metavar("$S"), reads=("arguments", "declarations"))
def tree_combine(ctx: GuardContext, body: Binding, t: Binding, s: Binding) -> Verdict:
    """$$$BODY is one statement (braced or not) that combines the thread's slot of a
    ``__shared__`` array with the slot $S above it: ``r[$T] += r[$T + $S];`` or ``r[$T] =
    OP(r[$T], r[$T + $S]);`` (either order of OP's arguments) with OP a maximum or a minimum
    (``fmaxf``, ``fmax``, ``max``, ``fminf``, ``fmin``, ``min``)."""
    src = ctx.unit.source
    nodes = [n for n in (body.nodes or ((body.node,) if body.node is not None else ()))
             if n.type != "comment"]
    expr = _one_statement(nodes[0]) if len(nodes) == 1 else None
    if expr is None or expr.type != "assignment_expression":
        return _no(ctx, f"{quoted(body)} is not one assignment", body.start)
    left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
    op = _flat(src, expr.child_by_field_name("operator"))
    if left is None or right is None or left.type != "subscript_expression":
        return _no(ctx, f"{quoted(body)} does not assign a slot", body.start)
    array = left.child_by_field_name("argument")
    name = _flat(src, array)
    tt, ss = "".join(t.text.split()), "".join(s.text.split())
    mine, above = f"{name}[{tt}]", {f"{name}[{tt}+{ss}]", f"{name}[{ss}+{tt}]"}
    if _flat(src, left) != mine:
        return _no(ctx, f"{quoted(body)} assigns `{_flat(src, left)}`, not the thread's slot "
                   f"`{mine}`", body.start)
    decl = ctx.function and next((d for d in _shared_decls(ctx) if d == name), None)
    if decl is None:
        return _no(ctx, f"`{name}` is not a __shared__ array of the kernel", body.start)
    if op == "+=" and _flat(src, right) in above:
        return _yes(f"{quoted(body)} adds the slot {ss} above the thread's", body.start)
    if op == "=" and right.type == "call_expression":
        fn = _flat(src, right.child_by_field_name("function"))
        args = right.child_by_field_name("arguments")
        got = sorted(_flat(src, a) for a in (args.named_children if args is not None else ()))
        if fn in FOLDS and len(got) == 2 and mine in got and \
                any(a in above for a in got if a != mine):
            return _yes(f"{quoted(body)} takes the {FOLDS[fn].noun} of the thread's slot and "
                        f"the slot {ss} above it", body.start)
    return _no(ctx, f"{quoted(body)} is not `{mine} += {name}[{tt} + {ss}]` or a maximum or "
               "minimum of the two slots", body.start)


def _shared_decls(ctx: GuardContext) -> list[str]:
    fn = ctx.function
    if fn is None:
        return []
    src = ctx.unit.source
    out = []
    stack = [fn.node]
    while stack:
        n = stack.pop()
        if n.type == "declaration" and "__shared__" in text_of(src, n):
            for d in n.children_by_field_name("declarator"):
                while d is not None and d.type not in ("identifier",):
                    d = d.child_by_field_name("declarator")
                if d is not None:
                    out.append(text_of(src, d))
        stack.extend(n.named_children)
    return out


@predicate("whole_block_tree", _metavar("$B"), reads=("arguments", "declarations", "spec"))
def whole_block_tree(ctx: GuardContext, b: Binding) -> Verdict:
    """The tree's size $B is the whole one-dimensional block: ``blockDim.x``, or a constant
    equal to the block's x extent (the spec's block, or every launch's), with blockDim.y =
    blockDim.z = 1."""
    dims, _, how = block_dims(ctx)
    if dims is None:
        return _no(ctx, f"the block is not known exactly ({how})", b.start)
    if dims[1] != 1 or dims[2] != 1:
        return _no(ctx, f"the block {list(dims)} is not one-dimensional", b.start)
    if "".join(b.text.split()) == "blockDim.x":
        return _yes(f"the tree spans blockDim.x = {dims[0]} threads", b.start)
    v = constant_of(ctx, b)[0]
    if isinstance(v, int) and not isinstance(v, bool) and v == dims[0]:
        return _yes(f"{quoted(b)} = {v} = blockDim.x", b.start)
    return _no(ctx, f"{quoted(b)} ({v if v is not None else 'not a known constant'}) is not "
               f"the block's x extent {dims[0]}", b.start)


@predicate("scan_total_only", ArgSpec("$$$TOT", frozenset({"metavar", "sequence"})),
           _metavar("$TEMP"), _metavar("$B"), reads=("arguments", "declarations"))
def scan_total_only(ctx: GuardContext, tot: Binding, temp: Binding, b: Binding) -> Verdict:
    """$TEMP is a ``__shared__`` array, and the code $$$TOT (what a block scan runs on thread
    0 once the segment's total is in its last slot) reads $TEMP only at that slot,
    ``$TEMP[2 * $B - 1]``, writes no ``__shared__`` array and holds no barrier or shuffle:
    a scan that fills the other slots in another order leaves it the same values."""
    src = ctx.unit.source
    name = "".join(temp.text.split())
    shared = set(_shared_decls(ctx))
    if name not in shared:
        return _no(ctx, f"`{name}` is not a __shared__ array of the kernel", temp.start)
    slot = f"{name}[2*{''.join(b.text.split())}-1]"
    nodes = [n for n in (tot.nodes or ((tot.node,) if tot.node is not None else ()))]
    stack = list(nodes)
    while stack:
        n = stack.pop()
        stack.extend(n.named_children)
        if n.type == "identifier" and text_of(src, n) == name:
            p = n.parent
            if p is None or p.type != "subscript_expression" or _flat(src, p) != slot:
                return _no(ctx, f"{quoted(tot)} reads `{name}` other than at its last slot "
                           f"`{slot}`", n.start_byte)
            q = p.parent
            if q is not None and q.type in ("assignment_expression", "update_expression") and \
                    (q.child_by_field_name("left") == p or q.type == "update_expression"):
                return _no(ctx, f"{quoted(tot)} writes the slot `{slot}`", n.start_byte)
        if n.type == "call_expression":
            fn = _flat(src, n.child_by_field_name("function"))
            if fn.startswith(("__syncthreads", "__syncwarp", "__shfl")):
                return _no(ctx, f"{quoted(tot)} calls `{fn}`", n.start_byte)
        if n.type == "assignment_expression":
            left = n.child_by_field_name("left")
            while left is not None and left.type == "subscript_expression":
                left = left.child_by_field_name("argument")
            if left is not None and text_of(src, left) in shared:
                return _no(ctx, f"{quoted(tot)} writes the __shared__ array "
                           f"`{text_of(src, left)}`", n.start_byte)
    return _yes(f"{quoted(tot)} reads `{name}` only at `{slot}` and writes no shared memory",
                tot.start)
