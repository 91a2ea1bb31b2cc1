"""Guard predicates for code that a rewrite hands to a warp working together: which value is
a thread's lane, which values the 32 lanes of a warp share, and whether a place of the kernel
is reached by whole warps (passes/attention_tiles.rule's key tile: a warp stages the keys of
its row in shared memory between ``__syncwarp()`` calls, which every lane must reach).

A warp is 32 consecutive threads of a one-dimensional block whose size is a multiple of 32:
then ``threadIdx.x / 32`` and ``(blockIdx.x * blockDim.x + threadIdx.x) / 32`` are the same
for its lanes, and ``threadIdx.x % 32`` is the lane."""

from __future__ import annotations

from tree_sitter import Node

from klc.analysis.constants import Evaluator, block_dims
from klc.analysis.declarations import declarations_named, lookup
from klc.analysis.launch import condition_of, field_of, is_linear_index, strip_casts
from klc.analysis.loops import LOOP_TYPES
from klc.analysis.tree import (
    binding_node,
    cited,
    in_span,
    names_in,
    nodes_of,
    operator_of,
    quoted,
    snippet,
    text_of,
    unparen,
)
from klc.analysis.writes import is_assigned
from klc.cuda.syntax import F_LEFT, F_RIGHT
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

_BLOCK_UNIFORM = frozenset({"blockIdx", "blockDim", "gridDim"})
# an expression's value is a function of the names it reads only without these
_IMPURE = ("call_expression", "assignment_expression", "update_expression", "subscript_expression",
           "pointer_expression", "lambda_expression", "new_expression", "delete_expression")
_LANE_WORDS = ("threadIdx", "__shfl", "laneid", "__lane_id", "thread_rank")


def _whole_warps(ctx: GuardContext) -> str | None:
    """Why the block may not be made of whole warps along x; None when it is: the block is
    known exactly, one-dimensional, and a multiple of 32 threads."""
    exact, _bound, how = block_dims(ctx)
    if exact is None:
        return f"the block's shape is not known exactly: {how}"
    if exact[1] != 1 or exact[2] != 1:
        return f"the block is {exact[0]} x {exact[1]} x {exact[2]} ({how}): not one-dimensional"
    if exact[0] % 32:
        return f"the block has {exact[0]} threads ({how}): not whole warps"
    return None


def _number(ctx: GuardContext, node: Node) -> int | None:
    v = Evaluator(ctx).node(node, ctx.unit.source)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _split(ctx: GuardContext, node: Node, ops: dict[str, int]) -> Node | None:
    """``X / 32``, ``X >> 5`` (``ops``: operator -> the constant it must have): X, else None."""
    node = strip_casts(node, ctx.unit.source)
    if node.type != "binary_expression":
        return None
    op = operator_of(node)
    want = ops.get(op)
    right = node.child_by_field_id(F_RIGHT)
    if want is None or right is None or _number(ctx, right) != want:
        return None
    left = node.child_by_field_id(F_LEFT)
    return None if left is None else strip_casts(left, ctx.unit.source)


def _thread_x(ctx: GuardContext, node: Node) -> bool:
    """``threadIdx.x`` or the global index ``blockIdx.x * blockDim.x + threadIdx.x``."""
    src = ctx.unit.source
    return field_of(node, src, "threadIdx", "x") or is_linear_index(node, src, "x")


def _is_warp_index(ctx: GuardContext, node: Node) -> bool:
    inner = _split(ctx, node, {"/": 32, ">>": 5})
    return inner is not None and _thread_x(ctx, inner)


def _is_lane(ctx: GuardContext, node: Node) -> bool:
    inner = _split(ctx, node, {"%": 32, "&": 31})
    return inner is not None and _thread_x(ctx, inner)


def _set_once(ctx: GuardContext, name: str, at: int) -> tuple[object, str] | str:
    """The local ``name`` seen at ``at``, declared with an initialiser and never assigned
    after: (its declaration, where), else why not."""
    fn = ctx.function
    assert fn is not None
    decl = lookup(ctx, name, at)
    if decl is None:
        return f"`{name}` is not a declared variable"
    where = cited(ctx.unit, decl.start, decl.end)
    if decl.origin != "local" or decl.init is None or decl.dims or decl.reference \
            or "__shared__" in decl.qualifiers or "static" in decl.qualifiers:
        return f"`{name}` is not a local set once from its initialiser ({where})"
    if is_assigned(ctx, name, decl.end, fn.body_end):
        return f"`{name}` is assigned after its declaration ({where})"
    return decl, where


@predicate("lane_index", _metavar("$L"), reads=("arguments", "declarations", "spec"))
def lane_index(ctx: GuardContext, lane: Binding) -> Verdict:
    """$L is the thread's lane in its warp: ``threadIdx.x % 32`` (or ``& 31``; the global
    index in place of threadIdx.x), or a local set once to it, in a one-dimensional block of
    whole warps (spec or launches): the 32 lanes of a warp have the values 0..31."""
    node = binding_node(lane)
    if node is None or ctx.function is None:
        return _no(ctx, f"{quoted(lane)} is not an expression in a function", lane.start)
    why = _whole_warps(ctx)
    if why is not None:
        return _no(ctx, why, lane.start)
    bare = strip_casts(node, ctx.unit.source)
    if _is_lane(ctx, bare):
        return _yes(f"{quoted(lane)} is the thread's lane", lane.start)
    if bare.type != "identifier":
        return _no(ctx, f"{quoted(lane)} is not threadIdx.x % 32 ({ctx.unit.where(lane.start)})",
                   lane.start)
    name = text_of(ctx.unit.source, bare)
    found = _set_once(ctx, name, lane.start)
    if isinstance(found, str):
        return _no(ctx, found, lane.start)
    decl, where = found
    if not _is_lane(ctx, decl.init):  # type: ignore[attr-defined]
        return _no(ctx, f"`{name}` is not initialised to threadIdx.x % 32 ({where})", lane.start)
    return _yes(f"`{name}` = the thread's lane ({where})", lane.start)


def _lane_varies_why(ctx: GuardContext, node: Node, allowed: frozenset[tuple[str, int]],
                     seen: set[int], depth: int = 0) -> str | None:
    """Why the value of ``node`` may differ between two lanes of a warp that agree on the
    variables in ``allowed`` ((name, declaration start); in ``node`` itself, the matched
    code, a name of them stands for its variable); None when it cannot."""
    src = ctx.unit.source
    text = text_of(src, node)
    if depth > 16:
        return f"`{snippet(text)}`: the definitions are too deeply nested"
    bare = strip_casts(node, src)
    if depth > 0 and _is_warp_index(ctx, bare):
        return None  # a warp's index: the same for its lanes
    if any(w in text for w in _LANE_WORDS):
        return f"`{snippet(text)}` reads the thread's index"
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in _IMPURE:
            return f"`{snippet(text_of(src, n))}` is a call, a memory read or a side effect " \
                   "(its value cannot be told from the names it reads)"
        stack.extend(n.children)
    fn = ctx.function
    assert fn is not None
    for name, ident in names_in(node, src):
        if name in _BLOCK_UNIFORM or (depth == 0 and name in {n for n, _ in allowed}):
            continue
        decl = lookup(ctx, name, ident.start_byte)
        if decl is None:
            if _number(ctx, ident) is not None:
                continue  # a #define'd or otherwise folded integer constant
            return f"`{name}` is neither a variable nor a known constant"
        if decl.start in seen or (name, decl.start) in allowed:
            continue
        if decl.origin == "parameter":
            if decl.reference or is_assigned(ctx, name, fn.body_start, fn.body_end):
                return f"parameter `{name}` is assigned in `{fn.name}`"
            continue
        if decl.origin == "global":
            if decl.const or "constexpr" in decl.qualifiers or "__constant__" in decl.qualifiers:
                continue
            return f"`{name}` is a global variable that may change"
        found = _set_once(ctx, name, ident.start_byte)
        if isinstance(found, str):
            return found
        seen.add(decl.start)
        why = _lane_varies_why(ctx, decl.init, allowed, seen, depth + 1)
        if why is not None:
            return f"`{name}` = `{snippet(text_of(src, decl.init))}`: {why}"
    return None


def _plain_names(ctx: GuardContext, *ms: Binding | None
                 ) -> frozenset[tuple[str, int]] | Verdict:
    """The variables the plain names $A, $B bound stand for: (name, declaration start)."""
    out = set()
    for m in ms:
        if m is None:
            continue
        node = binding_node(m)
        if node is None or unparen(node).type != "identifier":
            return _no(ctx, f"{quoted(m)} is not a plain name", m.start)
        name = text_of(ctx.unit.source, unparen(node))
        decl = lookup(ctx, name, m.start + 1)
        if decl is None:
            return _no(ctx, f"`{name}` is not a declared variable", m.start)
        out.add((name, decl.start))
        # a metavariable the anchor names several times binds each declaration in the match
        out.update((name, d.start) for d in declarations_named(ctx.unit, name)
                   if ctx.match.start <= d.start < ctx.match.end)
    return frozenset(out)


@predicate("warp_uniform", _metavar("$E"), ArgSpec("$A", frozenset({"metavar"}), optional=True),
           ArgSpec("$B", frozenset({"metavar"}), optional=True),
           reads=("arguments", "declarations", "spec"))
def warp_uniform(ctx: GuardContext, e: Binding, a: Binding | None = None,
                 b: Binding | None = None) -> Verdict:
    """The lanes of a warp that agree on the names $A and $B (none given: any two lanes)
    compute the same value of $E: it calls nothing, reads no memory and changes nothing, and
    every name in it is a block-uniform built-in, a constant, a parameter never assigned, or
    a local set once from an initialiser that passes the same test, a warp's index
    (``threadIdx.x / 32``, ``(blockIdx.x * blockDim.x + threadIdx.x) / 32``) counting as one;
    the block is one-dimensional and made of whole warps."""
    node = binding_node(e)
    if node is None or ctx.function is None:
        return _no(ctx, f"{quoted(e)} is not an expression in a function", e.start)
    why = _whole_warps(ctx)
    if why is not None:
        return _no(ctx, why, e.start)
    names = _plain_names(ctx, a, b)
    if isinstance(names, Verdict):
        return names
    why = _lane_varies_why(ctx, node, names, set())
    given = " and ".join(f"`{n}`" for n, _ in sorted(names)) or "nothing"
    if why is not None:
        return _no(ctx, f"{quoted(e)} may differ between the lanes of a warp that agree on "
                   f"{given}: {why} ({ctx.unit.where(e.start)})", e.start)
    return _yes(f"{quoted(e)} is the same for the lanes of a warp that agree on {given}",
                e.start)


_JUMPS = ("return_statement", "break_statement", "continue_statement", "goto_statement")


def _lane_condition_above(ctx: GuardContext, node: Node, stop: int) -> Node | None:
    """The first condition between ``node`` and the function body (start ``stop``) whose
    value may differ between the lanes of a warp."""
    cur = node
    while cur.parent is not None and cur.parent.start_byte > stop:
        cond = condition_of(cur.parent, cur)
        if cond is not None and _lane_varies_why(ctx, cond, frozenset(), set(), 1) is not None:
            return cond
        cur = cur.parent
    return None


@predicate("warp_converged", _region_arg(), reads=("position", "spec"))
def warp_converged(ctx: GuardContext, region: str = "anchor") -> Verdict:
    """All 32 lanes of every warp reach REGION (default: the match) together: the block is
    one-dimensional and made of whole warps; no condition of an if, loop, switch or ?:
    around REGION may differ between lanes; no return or goto before it, and no break or
    continue of a loop around it, sits under such a condition. A ``__syncwarp()`` that a
    rewrite puts in REGION is then reached by every lane."""
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    fn = ctx.function
    assert fn is not None
    unit, src = ctx.unit, ctx.unit.source
    why = _whole_warps(ctx)
    if why is not None:
        return _no(ctx, why, start)
    nodes = ctx.match.nodes if region == "anchor" else ()
    if not nodes:
        nodes = tuple(in_span(nodes_of(unit, "compound_statement"), start, end))[:1]
    if not nodes:
        return _no(ctx, f"{label} holds no statement", start)
    node = nodes[0]
    cond = _lane_condition_above(ctx, node, fn.body_start)
    if cond is not None:
        return _no(ctx, f"{label} is under `{snippet(text_of(src, cond))}` "
                   f"({unit.where(cond.start_byte)}), which may differ between the lanes of a "
                   "warp", cond.start_byte)
    around = [p for p in _ancestors(node, fn.body_start) if p.type in LOOP_TYPES]
    for jump in in_span(nodes_of(unit, *_JUMPS), fn.body_start, fn.body_end):
        before = jump.start_byte < start and jump.type in ("return_statement", "goto_statement")
        inside = any(p.start_byte <= jump.start_byte < p.end_byte for p in around) \
            and jump.type in ("break_statement", "continue_statement")
        if not (before or inside):
            continue
        guard = _lane_condition_above(ctx, jump, fn.body_start)
        if guard is not None:
            return _no(ctx, f"`{snippet(text_of(src, jump))}` ({unit.where(jump.start_byte)}) "
                       f"under `{snippet(text_of(src, guard))}`, which may differ between the "
                       f"lanes of a warp, lets some lanes skip {label}", jump.start_byte)
    return _yes(f"whole warps reach {label}", start)


def _ancestors(node: Node, stop: int) -> list[Node]:
    out = []
    cur = node.parent
    while cur is not None and cur.start_byte > stop:
        out.append(cur)
        cur = cur.parent
    return out
