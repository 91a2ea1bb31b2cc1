"""Guard predicates for strided loops in their common spellings (passes/strided_loops.rule):
the start and the step of a grid-stride or block-stride loop, written out, behind a cast, or
hoisted into a local, and whether the rest of a kernel reads the grid's or the block's
coordinates only through such loops.

A grid-stride loop ``for (i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x
* gridDim.x)`` is spelled many ways in real code: ``static_cast<int64_t>(blockIdx.x) *
blockDim.x + threadIdx.x``, a start and a stride hoisted into ``const`` locals, ``blockIdx.y``
and ``gridDim.y`` for a second axis whose block is one thread tall. A block-stride loop
``for (c = threadIdx.x; c < n; c += blockDim.x)`` likewise: ``tid`` for ``threadIdx.x``,
``bdimx`` for ``blockDim.x``, a template constant the block's extent equals, a 64-bit index.
The predicates here read the spellings so that one rule covers them all.

``grid_axis_in_strides`` and ``block_in_strides`` judge the whole kernel: a rewrite that
changes the grid (or the block) keeps the kernel's meaning only if nothing else reads the
coordinates it changes. Every other loop of the same shape stays correct under the new
launch (a grid-stride loop is correct for any grid, a block-stride loop for any block), so
only the reads outside such loops count.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from tree_sitter import Node

from klc.analysis.constants import block_dims, constant_of, kernel_spec, spec_for
from klc.analysis.declarations import function_declarations, lookup
from klc.analysis.launch import field_of, is_linear_index, strip_casts
from klc.analysis.tree import (
    binding_node,
    first_word,
    in_span,
    nodes_of,
    operator_of,
    pointer_roots,
    quoted,
    text_of,
    unparen,
    word_matches,
)
from klc.analysis.writes import (
    ATOMIC_CALL,
    address_taken,
    aliases_of,
    index_value,
    is_assigned,
    memory_updates,
    set_once,
)
from klc.cuda.model import Function
from klc.guards.constants import _as_spec_expr
from klc.guards.macros import file_definitions
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
from klc.spec import Bound, default_verify_sizes
from klc.spec.expr import evaluate, launch_dims

_AXIS = ArgSpec("axis", frozenset({"name"}), frozenset({"x", "y", "z"}))
_JUMPS = ("return_statement", "goto_statement", "break_statement", "continue_statement")


# --------------------------------------------------------------------------------------
# The spellings of one start or one step


def _block_extent_is_one(ctx: GuardContext, axis: str) -> bool:
    exact, _bound, _how = block_dims(ctx)
    return exact is not None and exact["xyz".index(axis)] == 1


def _grid_start(ctx: GuardContext, node: Node, src: bytes, axis: str) -> bool:
    """``blockIdx.a * blockDim.a + threadIdx.a`` (any order, casts aside), or ``blockIdx.a``
    alone where the block is one thread along the axis."""
    if is_linear_index(node, src, axis):
        return True
    return field_of(node, src, "blockIdx", axis) and _block_extent_is_one(ctx, axis)


def _grid_step(ctx: GuardContext, node: Node, src: bytes, axis: str) -> bool:
    """``blockDim.a * gridDim.a`` (either order, casts aside), or ``gridDim.a`` alone where
    the block is one thread along the axis."""
    bare = strip_casts(node, src)
    if bare.type == "binary_expression" and operator_of(bare) == "*":
        a, b = bare.child_by_field_name("left"), bare.child_by_field_name("right")
        if a is not None and b is not None and any(
                field_of(p, src, "blockDim", axis) and field_of(q, src, "gridDim", axis)
                for p, q in ((a, b), (b, a))):
            return True
    return field_of(bare, src, "gridDim", axis) and _block_extent_is_one(ctx, axis)


def _block_step(ctx: GuardContext, node: Node, src: bytes, axis: str) -> bool:
    """``blockDim.a`` (casts aside), or a compile-time constant equal to the block's extent
    along the axis, the block known exactly."""
    if field_of(node, src, "blockDim", axis):
        return True
    bare = strip_casts(node, src)
    if bare.type == "identifier" and lookup(ctx, text_of(src, bare), bare.start_byte) is not None:
        return False  # a variable (resolved through its declaration by the caller)
    b = Binding("$B", bare.start_byte, bare.end_byte, None, (bare,), src)
    v, _why, _definite, _sources = constant_of(ctx, b)
    if not isinstance(v, int):
        return False
    exact, _bound, _how = block_dims(ctx)
    return exact is not None and exact["xyz".index(axis)] == v


def _thread_start(node: Node, src: bytes, axis: str) -> bool:
    return field_of(node, src, "threadIdx", axis)


def _through_alias(ctx: GuardContext, e: Binding, what: str, test) -> Verdict:  # type: ignore[no-untyped-def]
    """$E is of the shape ``test`` accepts, itself or as a local initialised to it and never
    reassigned (``const int64_t stride = (int64_t)gridDim.x * blockDim.x;``)."""
    node = binding_node(e)
    src = ctx.unit.source
    if node is None:
        return _no(ctx, f"{quoted(e)} is a sequence, not an expression", e.start)
    if test(node):
        return _yes(f"{quoted(e)} is {what}", e.start)
    bare = strip_casts(node, src)
    if bare.type == "identifier":
        name = text_of(src, bare)
        decl, why = set_once(ctx, name, e.start)
        if decl is None:
            return _no(ctx, f"`{name}` is not {what} ({ctx.unit.where(e.start)})", e.start)
        if decl.origin != "local" or decl.init is None or not test(decl.init):
            return _no(ctx, f"`{name}` is not a local initialised to {what}", e.start)
        if decl.pointer or decl.reference:
            return _no(ctx, f"`{name}` is a pointer or a reference, not {what}", e.start)
        if why:
            return _no(ctx, f"`{name}` is initialised to {what} but reassigned later", e.start)
        return _yes(f"`{name}` = {what} ({ctx.unit.where(decl.start)})", e.start)
    return _no(ctx, f"{quoted(e)} is not {what} ({ctx.unit.where(e.start)})", e.start)


@predicate("grid_stride_start", _metavar("$E"), _AXIS,
           reads=("arguments", "declarations", "spec"))
def grid_stride_start(ctx: GuardContext, e: Binding, axis: str) -> Verdict:
    """$E is the thread's index in the grid along AXIS, where a grid-stride loop starts:
    ``blockIdx.a * blockDim.a + threadIdx.a`` (terms and factors in any order, casts aside:
    ``static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x``), or ``blockIdx.a`` where
    the block is one thread along AXIS (spec or every launch), or a local initialised to
    either and never reassigned."""
    src = ctx.unit.source
    return _through_alias(ctx, e, f"the thread's index in the grid along {axis}",
                          lambda n: _grid_start(ctx, n, src, axis))


@predicate("grid_stride_step", _metavar("$E"), _AXIS,
           reads=("arguments", "declarations", "spec"))
def grid_stride_step(ctx: GuardContext, e: Binding, axis: str) -> Verdict:
    """$E is the grid's thread count along AXIS, a grid-stride loop's step: ``blockDim.a *
    gridDim.a`` (either order, casts aside: ``static_cast<int64_t>(gridDim.x) *
    blockDim.x``), or ``gridDim.a`` where the block is one thread along AXIS, or a local
    initialised to either and never reassigned."""
    src = ctx.unit.source
    return _through_alias(ctx, e, f"the grid's thread count along {axis}",
                          lambda n: _grid_step(ctx, n, src, axis))


@predicate("block_stride_step", _metavar("$E"), _AXIS,
           reads=("arguments", "declarations", "spec"))
def block_stride_step(ctx: GuardContext, e: Binding, axis: str) -> Verdict:
    """$E is the block's extent along AXIS, a block-stride loop's step: ``blockDim.a``
    (casts aside), a compile-time constant equal to it (a literal, a #define, a template
    argument the spec gives: ``TPB``; the block known exactly), or a local initialised to
    either and never reassigned (``const int bdimx = blockDim.x;``)."""
    src = ctx.unit.source
    return _through_alias(ctx, e, f"the block's extent along {axis}",
                          lambda n: _block_step(ctx, n, src, axis))


@predicate("unassigned_in", _metavar("$X"), ArgSpec("$$$S", frozenset({"metavar", "sequence"})),
           reads=("arguments",))
def unassigned_in(ctx: GuardContext, x: Binding, stmts: Binding) -> Verdict:
    """The variable $X is neither assigned, incremented nor address-taken in the code bound
    to $$$S: a loop's index that its body only reads."""
    name = x.text.strip()
    if is_assigned(ctx, name, stmts.start, stmts.end):
        return _no(ctx, f"`{name}` is assigned in {quoted(stmts)}", stmts.start)
    src = ctx.unit.source
    for node in in_span(nodes_of(ctx.unit, "pointer_expression"), stmts.start, stmts.end):
        arg = node.child_by_field_name("argument")
        if text_of(src, node).startswith("&") and arg is not None \
                and unparen(arg).type == "identifier" and text_of(src, unparen(arg)) == name:
            return _no(ctx, f"`{name}`'s address is taken ({ctx.unit.where(node.start_byte)})",
                       node.start_byte)
    return _yes(f"`{name}` is only read in {quoted(stmts)}", stmts.start)


# --------------------------------------------------------------------------------------
# The whole kernel: the coordinates read only in strided loops' headers


def _fields(fn: Function, unit, src: bytes, bases: tuple[str, ...], axis: str
            ) -> list[Node]:  # type: ignore[no-untyped-def]
    return [n for n in in_span(nodes_of(unit, "field_expression"), fn.body_start, fn.body_end)
            if any(field_of(n, src, b, axis) for b in bases)]


def _for_header(node: Node) -> tuple[Node, str] | None:
    """(the for statement, "start" | "step") when ``node`` lies in a for loop's initializer
    or update (its nearest for statement's), else None."""
    child, p = node, node.parent
    while p is not None:
        if p.type == "for_statement":
            for part, label in (("initializer", "start"), ("update", "step")):
                h = p.child_by_field_name(part)
                if h is not None and h.start_byte <= child.start_byte \
                        and child.end_byte <= h.end_byte:
                    return p, label
            return None
        if p.type in ("compound_statement", "function_definition"):
            return None
        child, p = p, p.parent
    return None


def _loop_shape(ctx: GuardContext, loop: Node, start_ok, step_ok  # type: ignore[no-untyped-def]
                ) -> str | None:
    """Why ``loop`` is not ``for (T i = START; i < n; i += STEP) BODY`` with START and STEP
    accepted (directly or through a never-reassigned local) and a BODY that never assigns
    ``i`` and has no jump out of it; None when it is."""
    src, unit = ctx.unit.source, ctx.unit
    init = loop.child_by_field_name("initializer")
    update = loop.child_by_field_name("update")
    body = loop.child_by_field_name("body")
    where = unit.where(loop.start_byte)
    if init is None or init.type != "declaration" or update is None or body is None:
        return f"the loop at {where} does not declare its index and step it"
    decls = [c for c in init.named_children if c.type == "init_declarator"]
    if len(decls) != 1:
        return f"the loop at {where} does not declare one index"
    var = decls[0].child_by_field_name("declarator")
    value = decls[0].child_by_field_name("value")
    if var is None or value is None or var.type != "identifier":
        return f"the loop at {where} does not start a plain index"
    name = text_of(src, var)

    def accepted(node: Node, test) -> bool:  # type: ignore[no-untyped-def]
        if test(node):
            return True
        bare = strip_casts(node, src)
        if bare.type != "identifier":
            return False
        d = lookup(ctx, text_of(src, bare), bare.start_byte)
        return d is not None and d.origin == "local" and d.init is not None \
            and not d.pointer and test(d.init) \
            and not is_assigned(ctx, d.name, d.end, ctx.function.body_end)  # type: ignore[union-attr]

    if not accepted(value, start_ok):
        return f"the loop at {where} starts `{name}` at `{text_of(src, value)}`"
    step = None
    if update.type == "assignment_expression" and operator_of(update) == "+=":
        left = update.child_by_field_name("left")
        if left is not None and text_of(src, unparen(left)) == name:
            step = update.child_by_field_name("right")
    if step is None or not accepted(step, step_ok):
        return f"the loop at {where} steps by `{text_of(src, update)}`"
    cond = loop.child_by_field_name("condition")
    if cond is None or re.search(rb"\b(threadIdx|blockIdx|blockDim|gridDim)\b",
                                 src[cond.start_byte:cond.end_byte]):
        return f"the loop at {where} has no bound, or a bound that reads the launch"
    if is_assigned(ctx, name, body.start_byte, body.end_byte):
        return f"the loop at {where} assigns its index `{name}` in its body"
    for j in in_span(nodes_of(unit, *_JUMPS), body.start_byte, body.end_byte):
        if j.type in ("break_statement", "continue_statement"):
            p = j.parent
            while p is not None and p.start_byte > body.start_byte and p.type not in (
                    "for_statement", "while_statement", "do_statement", "switch_statement"):
                p = p.parent
            if p is not None and p.start_byte > body.start_byte:
                continue
        return f"`{text_of(src, j)}` ({unit.where(j.start_byte)}) leaves the loop at {where}"
    return None


def _alias_reads(ctx: GuardContext, fn: Function, decl: Any) -> Iterator[Node]:
    src, unit = ctx.unit.source, ctx.unit
    for node in in_span(nodes_of(unit, "identifier"), decl.end, fn.body_end):
        if text_of(src, node) == decl.name and lookup(ctx, decl.name, node.start_byte) is decl:
            yield node


def _only_in_loops(ctx: GuardContext, fn: Function, bases: tuple[str, ...], axis: str,
                   start_ok, step_ok, label: str) -> tuple[Verdict, list[Node]]:  # type: ignore[no-untyped-def]
    """Every read of ``bases``' field ``axis`` in ``fn`` is the start or the step of a loop
    of the accepted shape, directly or through a local read only there. Returns the verdict
    and the loops."""
    src, unit = ctx.unit.source, ctx.unit
    aliases = {d.start: d for d in function_declarations(unit, fn)
               if d.origin == "local" and d.init is not None and not d.pointer}
    loops: dict[int, Node] = {}
    for f in _fields(fn, unit, src, bases, axis):
        uses: list[Node] = [f]
        owner = next((d for d in aliases.values()
                      if d.init is not None and d.init.start_byte <= f.start_byte
                      and f.end_byte <= d.init.end_byte), None)
        if owner is not None and _for_header(f) is None:
            uses = list(_alias_reads(ctx, fn, owner))
        for u in uses:
            header = _for_header(u)
            if header is None:
                what = f"`{owner.name}`, which holds `{text_of(src, f)}`," if owner is not None \
                    and u is not f else f"`{text_of(src, f)}`"
                return _no(ctx, f"{what} is read at {unit.where(u.start_byte)}, not as the "
                           f"start or step of a {label} loop", u.start_byte), []
            loop = header[0]
            why = _loop_shape(ctx, loop, start_ok, step_ok)
            if why is not None:
                return _no(ctx, f"{why}: not a {label} loop", loop.start_byte), []
            loops[loop.start_byte] = loop
    return _yes(f"`{fn.name}` reads {'/'.join(bases)}.{axis} only as the start or step of "
                f"{len(loops)} {label} loop(s)", fn.start), list(loops.values())


def _helpers_read(ctx: GuardContext, fn: Function, words: re.Pattern[bytes]) -> str | None:
    """A function of this file that ``fn`` calls (directly or not) and whose body matches
    ``words``, or a macro used in ``fn`` whose definition does: its name. Kept per function
    and words (``Unit.memo``): the loops of one kernel ask the same."""
    memo = ctx.unit.memo.setdefault(_HELPERS_READ, {})
    key = (fn.start, fn.end, words.pattern)
    if key not in memo:
        memo[key] = _helper_reading(ctx, fn, words)
    return memo[key]  # type: ignore[no-any-return]


_HELPERS_READ = "klc.guards.strides: helpers read"
_ANY_READS = "klc.guards.strides: a function reads"


def _helper_reading(ctx: GuardContext, fn: Function, words: re.Pattern[bytes]) -> str | None:
    src, unit = ctx.unit.source, ctx.unit
    defs, macros = file_definitions(unit)
    body = src[fn.body_start:fn.body_end]
    for name, value in macros.items():
        if words.search(value) and name.encode() in body \
                and re.search(rb"\b" + name.encode() + rb"\b", body):
            return f"the macro `{name}`"
    memo = unit.memo.setdefault(_ANY_READS, {})
    if words.pattern not in memo:
        memo[words.pattern] = any(first_word(words, src, f.body_start, f.body_end)
                                  for fs in defs.values() for f in fs)
    if not memo[words.pattern]:
        return None  # (no function of the file reads them: its calls need not be found)
    todo = [c.name for c in fn.calls]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for f in defs.get(name, []):
            if first_word(words, src, f.body_start, f.body_end):
                return f"`{name}` ({unit.where(f.start)})"
            todo.extend(c.name for c in f.calls)
    return None


@predicate("grid_axis_in_strides", _AXIS, reads=("position", "declarations", "spec"))
def grid_axis_in_strides(ctx: GuardContext, axis: str) -> Verdict:
    """The kernel reads ``blockIdx.a`` and ``gridDim.a`` (AXIS a) only as the start or the
    step of grid-stride loops along AXIS (``grid_stride_start``, ``grid_stride_step``;
    written out or through locals read only there), each of the shape ``for (T i = start;
    i < n; i += step)`` whose bound reads no launch coordinate and whose body never assigns
    ``i`` nor jumps out; the helpers and macros it uses do not read them. A grid-stride loop
    is correct for any grid: growing the grid along AXIS changes nothing else."""
    got = _kernel_region(ctx, "kernel")
    if isinstance(got, Verdict):
        return got
    fn = got[3]
    src = ctx.unit.source
    words = re.compile(rb"\b(blockIdx|gridDim)\s*\.\s*" + axis.encode() + rb"\b")
    helper = _helpers_read(ctx, fn, words)
    if helper is not None:
        return _no(ctx, f"{helper}, used by `{fn.name}`, reads blockIdx.{axis} or gridDim.{axis}")
    verdict, _loops = _only_in_loops(
        ctx, fn, ("blockIdx", "gridDim"), axis,
        lambda n: _grid_start(ctx, n, src, axis), lambda n: _grid_step(ctx, n, src, axis),
        f"grid-stride (along {axis})")
    return verdict


@predicate("block_in_strides", _region_arg(), reads=("position", "declarations", "spec"))
def block_in_strides(ctx: GuardContext, region: str = "kernel") -> Verdict:
    """The kernel would compute the same with a block of one thread: it reads ``threadIdx.x``
    and ``blockDim.x`` only as the start and the step of block-stride loops ``for (T c =
    threadIdx.x; c < n; c += blockDim.x)`` (``block_thread_index``, ``block_stride_step``
    spellings, through locals read only there), whose bound reads no launch coordinate and
    whose body never assigns ``c``, has no jump out of it and reads neither threadIdx nor
    blockDim nor a barrier (nor do its helpers); no other thread coordinate, warp intrinsic,
    cooperative group or CUB block collective (made for the block's threads) is used; and
    outside those loops no memory is updated in place or by an atomic (each thread of the
    block ran that code: one thread runs it once). Each element ``c`` was one thread's: with
    one thread, the loops visit the same elements in order."""
    got = _kernel_region(ctx, region)
    if isinstance(got, Verdict):
        return got
    start, end, _label, fn = got
    unit, src = ctx.unit, ctx.unit.source
    if fn.warp_intrinsics:
        c = fn.warp_intrinsics[0]
        return _no(ctx, f"`{fn.name}` calls {c.name} ({unit.where(c.start)}): a warp of one "
                   "lane", c.start)
    other = re.search(rb"\b(threadIdx|blockDim)\s*\.\s*[yz]\b|\bthreadIdx\s*[^.\s]"
                      rb"|cooperative_groups|this_thread_block|\bcg::|\bcub::"
                      rb"|\bBlock(Reduce|Scan|Load|Store|Exchange|RadixSort)\b",
                      src[fn.body_start:fn.body_end])
    if other is not None:
        return _no(ctx, f"`{fn.name}` reads `{other.group(0).decode().strip()}`",
                   fn.body_start + other.start())
    helper = _helpers_read(ctx, fn, re.compile(rb"\b(threadIdx|blockDim|__shfl\w*|"
                                               rb"__syncwarp|__ballot_sync|__activemask)\b"))
    if helper is not None:
        return _no(ctx, f"{helper}, used by `{fn.name}`, reads the thread's coordinates")

    def start_ok(n: Node) -> bool:
        return _thread_start(n, src, "x")

    def step_ok(n: Node) -> bool:
        return _block_step(ctx, n, src, "x")

    verdict, loops = _only_in_loops(ctx, fn, ("threadIdx", "blockDim"), "x", start_ok,
                                    step_ok, "block-stride")
    if not verdict.ok:
        return verdict
    if not loops:
        return _no(ctx, f"`{fn.name}` has no block-stride loop")
    spans = sorted((lp.start_byte, lp.end_byte) for lp in loops)
    for lp in loops:
        body = lp.child_by_field_name("body")
        assert body is not None
        hit = re.search(rb"\b(threadIdx|blockDim|__syncthreads)\b",
                        src[body.start_byte:body.end_byte])
        if hit is not None:
            return _no(ctx, f"the block-stride loop at {unit.where(lp.start_byte)} reads "
                       f"`{hit.group(1).decode()}` in its body", lp.start_byte)

    def outside(pos: int) -> bool:
        return not any(s <= pos < e for s, e in spans)

    for node in in_span(nodes_of(unit, "assignment_expression", "update_expression"),
                        start, end):
        if not outside(node.start_byte):
            continue
        if node.type == "assignment_expression":
            if operator_of(node) == "=":
                continue
            target = node.child_by_field_name("left")
        else:
            target = node.child_by_field_name("argument")
        if target is not None and unparen(target).type != "identifier":
            return _no(ctx, f"`{text_of(src, node)}` ({unit.where(node.start_byte)}) updates "
                       "memory in place outside the block-stride loops: every thread of the "
                       "block ran it", node.start_byte)
    for m in ATOMIC_CALL.finditer(src, start, end):
        if outside(m.start()):
            return _no(ctx, f"an atomic ({unit.where(m.start())}) outside the block-stride "
                       "loops: every thread of the block ran it", m.start())
    return _yes(f"`{fn.name}` reads the thread's position only in {len(loops)} block-stride "
                "loop(s), whose elements one thread visits in order", start)


@predicate("thread_coordinates_unread", reads=("position",))
def thread_coordinates_unread(ctx: GuardContext) -> Verdict:
    """The kernel reads no thread coordinate (``threadIdx``, ``blockDim``, any axis), warp
    intrinsic, cooperative group or CUB block collective, nor do the helpers and macros it
    uses, and outside the anchor it updates no memory in place and calls no atomic: every
    thread of a larger block runs the code around the anchor alike and computes the same
    (one_thread_to_block_stride, from a block of one thread)."""
    got = _kernel_region(ctx, "kernel")
    if isinstance(got, Verdict):
        return got
    start, end, _label, fn = got
    unit, src = ctx.unit, ctx.unit.source
    if fn.warp_intrinsics:
        c = fn.warp_intrinsics[0]
        return _no(ctx, f"`{fn.name}` calls {c.name} ({unit.where(c.start)})", c.start)
    for hit in re.finditer(rb"\b(threadIdx|blockDim)\b|cooperative_groups|this_thread_block"
                           rb"|\bcg::|\bcub::|\bBlock(Reduce|Scan|Load|Store|Exchange|"
                           rb"RadixSort)\b", src[fn.body_start:fn.body_end]):
        at = fn.body_start + hit.start()
        if hit.group(1) is not None and _dead_local_init(ctx, fn, at):
            continue  # (`const int tid = threadIdx.x;` read nowhere: no thread sees it)
        return _no(ctx, f"`{fn.name}` reads `{hit.group(0).decode()}` ({unit.where(at)})", at)
    helper = _helpers_read(ctx, fn, re.compile(rb"\b(threadIdx|blockDim|__shfl\w*|"
                                               rb"__syncwarp|__ballot_sync|__activemask)\b"))
    if helper is not None:
        return _no(ctx, f"{helper}, used by `{fn.name}`, reads the thread's coordinates")
    why = _outside_updates(ctx, start, end)
    if why is not None:
        return why
    return _yes(f"`{fn.name}` reads no thread coordinate, and outside the anchor updates no "
                "memory in place", start)


# --------------------------------------------------------------------------------------
# A row's loop split into tiles over the grid


@predicate("tiles_cover", _AXIS, _metavar("$TS"), _metavar("$N"),
           reads=("arguments", "declarations", "spec"))
def tiles_cover(ctx: GuardContext, axis: str, ts: Binding, n: Binding) -> Verdict:
    """The grid's tiles along AXIS cover the range: at every size the spec runs (its sizes,
    its verify sizes or those the gate derives), the grid's extent along AXIS times $TS is at
    least $N ($TS and $N kernel parameters by their spec values, locals set once by their
    initialisers, or constants). A loop ``for (v = blockIdx.a * TS; v < min(blockIdx.a * TS
    + TS, N); v++)`` then visits every element of [0, N) in some block."""
    bound = spec_for(ctx)
    spec = kernel_spec(bound)
    if spec is None:
        return _no(ctx, f"no spec: the tiles of {quoted(ts)} along {axis} are not known to "
                   f"cover {quoted(n)}", ts.start)
    try:
        ts_expr = _as_spec_expr(ctx, ts.text, ts.start, spec, 0)
        n_expr = _as_spec_expr(ctx, n.text, n.start, spec, 0)
    except ValueError as e:
        return _no(ctx, f"the tiles have no value in the spec's terms: {e}", ts.start)
    k = "xyz".index(axis)
    try:
        runs = list(spec.verify_sizes) or default_verify_sizes(
            spec.sizes, launch_dims(spec.block, bound.env() if isinstance(bound, Bound)
                                    else spec.env())[0])
        for sizes in (spec.sizes, *runs):
            env = bound.env(sizes) if isinstance(bound, Bound) else spec.env(sizes)
            extent = launch_dims(spec.grid, env)[k]
            tile, total = evaluate(ts_expr, env), evaluate(n_expr, env)
            if tile <= 0 or extent * tile < total:
                return _no(ctx, f"at sizes {sizes} the grid's {extent} tiles of {tile} along "
                           f"{axis} do not cover {quoted(n)} = {total}", ts.start)
    except Exception as e:  # a value the spec's sizes do not give: not proven
        return _no(ctx, f"the spec's sizes give the tiles no value ({e})", ts.start)
    return _yes(f"at every spec size the grid's tiles of {quoted(ts)} along {axis} cover "
                f"{quoted(n)}", ts.start)


@predicate("grid_axis_read_once", _AXIS, reads=("position",))
def grid_axis_read_once(ctx: GuardContext, axis: str) -> Verdict:
    """The kernel reads the grid along AXIS once: one ``blockIdx.a``, inside the anchor, and
    no ``gridDim.a`` (nor do the helpers and macros it uses); outside the anchor it updates no
    memory in place and calls no atomic. With fewer blocks along AXIS, the code outside the
    anchor runs fewer times and computes the same."""
    got = _kernel_region(ctx, "kernel")
    if isinstance(got, Verdict):
        return got
    start, end, _label, fn = got
    m0, m1 = ctx.match.start, ctx.match.end
    unit = ctx.unit
    words = re.compile(rb"\b(blockIdx|gridDim)\s*\.\s*" + axis.encode() + rb"\b")
    helper = _helpers_read(ctx, fn, words)
    if helper is not None:
        return _no(ctx, f"{helper}, used by `{fn.name}`, reads blockIdx.{axis} or gridDim.{axis}")
    reads = _axis_reads(ctx, words, start, end)
    for at, text, base in reads:
        if not m0 <= at < m1 or base == b"gridDim":
            return _no(ctx, f"`{text.decode()}` is read at {unit.where(at)}", at)
    if len(reads) != 1:
        return _no(ctx, f"`{fn.name}` reads blockIdx.{axis} {len(reads)} times, not once")
    why = _outside_updates(ctx, start, end)
    if why is not None:
        return why
    return _yes(f"`{fn.name}` reads blockIdx.{axis} once, in the anchor", start)


@predicate("grid_axis_unread", _AXIS, reads=("position",))
def grid_axis_unread(ctx: GuardContext, axis: str) -> Verdict:
    """The kernel reads neither ``blockIdx.a`` nor ``gridDim.a`` (nor do the helpers and
    macros it uses), and outside the anchor it updates no memory in place and calls no
    atomic: every block along AXIS computes the same there, so a rewrite that splits the
    anchor's work over more blocks along AXIS (whole_range_to_grid_y_tiles) changes nothing
    else."""
    got = _kernel_region(ctx, "kernel")
    if isinstance(got, Verdict):
        return got
    start, end, _label, fn = got
    unit = ctx.unit
    words = re.compile(rb"\b(blockIdx|gridDim)\s*\.\s*" + axis.encode() + rb"\b")
    helper = _helpers_read(ctx, fn, words)
    if helper is not None:
        return _no(ctx, f"{helper}, used by `{fn.name}`, reads blockIdx.{axis} or gridDim.{axis}")
    for at, text, _base in _axis_reads(ctx, words, start, end):
        return _no(ctx, f"`{text.decode()}` is read at {unit.where(at)}", at)
    why = _outside_updates(ctx, start, end)
    if why is not None:
        return why
    return _yes(f"`{fn.name}` reads neither blockIdx.{axis} nor gridDim.{axis}", start)


def _axis_reads(ctx: GuardContext, words: re.Pattern[bytes], start: int, end: int
                ) -> list[tuple[int, bytes, bytes]]:
    """Where ``words`` (``blockIdx.a`` or ``gridDim.a``) stands in [start, end): (offset,
    text, ``blockIdx`` or ``gridDim``), in order; kept per span (``Unit.memo``): every loop
    of a kernel asks."""
    memo = ctx.unit.memo.setdefault(_AXIS_READS, {})
    key = (start, end, words.pattern)
    got = memo.get(key)
    if got is None:
        got = memo[key] = [(m.start(), m.group(0), m.group(1))
                           for m in word_matches(words, ctx.unit.source, start, end)]
    return got  # type: ignore[no-any-return]


_AXIS_READS = "klc.guards.strides: axis reads"


def _outside_updates(ctx: GuardContext, start: int, end: int) -> Verdict | None:
    """A refusal for an in-place memory update or an atomic in [start, end) outside the
    anchor (every block along the axis ran it), or None."""
    (m0, m1), unit = (ctx.match.start, ctx.match.end), ctx.unit
    updates, atomics = memory_updates(unit, start, end)
    for node in updates:
        if not m0 <= node.start_byte < m1:
            return _no(ctx, f"`{text_of(unit.source, node)}` ({unit.where(node.start_byte)}) "
                       "updates memory in place: every block along the axis ran it",
                       node.start_byte)
    for at in atomics:
        if not m0 <= at < m1:
            return _no(ctx, f"an atomic ({unit.where(at)}) outside the anchor: every block "
                       "along the axis ran it", at)
    return None


@predicate("iteration_owned_stores", _metavar(),
           ArgSpec("$$$S", frozenset({"metavar", "sequence"})),
           reads=("arguments", "declarations", "position"))
def iteration_owned_stores(ctx: GuardContext, var: Binding, stmts: Binding) -> Verdict:
    """Every memory write in $$$S (a store, an in-place update) is ``b[i]``, ``b`` the
    memory of a pointer parameter (itself or a pointer made from it: global memory, not a
    thread's own array), ``i`` the loop variable $C plus terms that $$$S never changes
    (``c``, ``row * n + c``),
    and the memory of ``b`` (its aliases, the parameter it is a row of) is reached nowhere
    else in the function but as that same ``b[i]`` inside $$$S, nor handed to a call: each
    iteration touches only its own elements of what the loop writes, so the iterations may
    run on different threads (or blocks) in any order, with no barrier after them
    (one_thread_to_block_stride, whole_range_to_grid_y_tiles). And no memory that $$$S
    reads is written (or handed to a call) anywhere else in the function: another thread
    running the code around the loop ahead of this one would change what it reads."""
    from klc.guards.lanes import _access, _family, _hands_family, _lane_index

    unit, src, fn = ctx.unit, ctx.unit.source, ctx.function
    if fn is None:
        return _no(ctx, f"{quoted(stmts)} is not in a function", stmts.start)
    name = " ".join(var.text.split())
    owned: dict[str, str] = {}
    for node in in_span(nodes_of(unit, "assignment_expression", "update_expression"),
                        stmts.start, stmts.end):
        target = node.child_by_field_name("left" if node.type == "assignment_expression"
                                          else "argument")
        if target is None or unparen(target).type == "identifier":
            continue
        what = f"`{text_of(src, node)}` ({unit.where(node.start_byte)})"
        access = _access(unit, unparen(target))
        key = _lane_index(unit, _index_value(ctx, stmts, access[1]), name) \
            if access is not None else None
        if access is None or key is None:
            return _no(ctx, f"{what} writes memory at an element whose index is not `{name}` "
                       "plus terms that stay fixed", node.start_byte)
        for w in sorted(set(re.findall(r"[A-Za-z_]\w*", key)) | {access[0]}):
            if w != name and not _fixed_in(ctx, w, stmts):
                return _no(ctx, f"{what}: `{w}` may change from one iteration to the next",
                           node.start_byte)
        if not any((q.pointer > 0 or q.array) and access[0] in aliases_of(ctx, q.name)
                   for q in fn.params):
            return _no(ctx, f"{what} writes `{access[0]}`, which is not the memory of a pointer "
                       f"parameter of `{fn.name}` (a thread's own array, or shared memory, that "
                       "the other threads' iterations would not fill)", node.start_byte)
        if owned.setdefault(access[0], key) != key:
            return _no(ctx, f"{what} writes `{access[0]}` at another index than its other "
                       "writes", node.start_byte)
    for base, key in owned.items():
        family = _family(ctx, fn, base)
        for node in in_span(nodes_of(unit, "subscript_expression", "pointer_expression",
                                     "call_expression", "gnu_asm_expression"),
                            fn.body_start, fn.body_end):
            where = f"`{text_of(src, node)}` ({unit.where(node.start_byte)})"
            if node.type == "call_expression":
                args = node.child_by_field_name("arguments")
                parts = args.named_children if args is not None else []
                if any(_hands_family(ctx, fn, a, family) for a in parts if a.type != "comment"):
                    return _no(ctx, f"{where} hands the memory of `{base}` to a call",
                               node.start_byte)
                continue
            if node.type == "gnu_asm_expression":
                return _no(ctx, f"{where}: asm in `{fn.name}`", node.start_byte)
            if not (pointer_roots(node, src) & family):
                continue
            if node.type == "pointer_expression" and operator_of(node) == "&":
                return _no(ctx, f"{where} takes the address of memory of `{base}`",
                           node.start_byte)
            access = _access(unit, node)
            inside = stmts.start <= node.start_byte < stmts.end
            if not inside or access is None or access[0] != base \
                    or _lane_index(unit, _index_value(ctx, stmts, access[1]), name) != key:
                return _no(ctx, f"{where} reaches the memory of `{base}` other than as "
                           f"`{base}[{key.replace('@', name)}]` in the loop: another "
                           "iteration's element", node.start_byte)
    why = _reads_written_elsewhere(ctx, fn, stmts)
    if why is not None:
        return why
    if not owned:
        return _yes(f"{quoted(stmts)} writes no memory", stmts.start)
    return _yes(f"each write of {quoted(stmts)} touches its iteration's own element of "
                f"{', '.join(f'`{b}`' for b in owned)}, reached nowhere else", stmts.start)


def _index_value(ctx: GuardContext, stmts: Binding, index: Node) -> Node:
    """``index_value`` over the statements $$$S."""
    return index_value(ctx, stmts.start, stmts.end, index)


def _fixed_in(ctx: GuardContext, word: str, stmts: Binding) -> bool:
    """Does the variable ``word`` keep one value throughout the iterations of $$$S? Not
    declared, assigned or incremented in $$$S, and its address never taken in the function
    (code before the loop may set it: every thread runs that code alike)."""
    src = ctx.unit.source
    fn = ctx.function
    if fn is None or is_assigned(ctx, word, stmts.start, stmts.end) \
            or address_taken(src, word, fn.body_start, fn.body_end):
        return False
    for node in in_span(nodes_of(ctx.unit, "init_declarator", "declaration"), stmts.start,
                        stmts.end):
        decl = node.child_by_field_name("declarator")
        if decl is not None and text_of(src, decl) == word:
            return False
    return True


def _dead_local_init(ctx: GuardContext, fn: Function, at: int) -> bool:
    """Is the byte ``at`` in the initialiser of a local whose name is used nowhere else in
    the function?"""
    unit, src = ctx.unit, ctx.unit.source
    for node in in_span(nodes_of(unit, "init_declarator"), fn.body_start, fn.body_end):
        value = node.child_by_field_name("value")
        decl = node.child_by_field_name("declarator")
        if value is None or decl is None or decl.type != "identifier" \
                or not value.start_byte <= at < value.end_byte:
            continue
        name = text_of(src, decl)
        uses = re.findall(rb"\b" + re.escape(name.encode()) + rb"\b",
                          src[fn.body_start:fn.body_end])
        return len(uses) == 1
    return False


def _reads_written_elsewhere(ctx: GuardContext, fn: Function, stmts: Binding
                             ) -> Verdict | None:
    """A refusal where $$$S reads memory that the function writes (a store, an in-place
    update, a call handed the pointer) outside $$$S, or None."""
    from klc.guards.lanes import _family, _hands_family

    unit, src = ctx.unit, ctx.unit.source
    reads: dict[str, Node] = {}
    for node in in_span(nodes_of(unit, "subscript_expression", "pointer_expression"),
                        stmts.start, stmts.end):
        if node.type == "pointer_expression" and operator_of(node) != "*":
            continue
        for root in pointer_roots(node, src):
            reads.setdefault(root, node)
    if not reads:
        return None
    families = {root: _family(ctx, fn, root) for root in reads}
    for node in in_span(nodes_of(unit, "assignment_expression", "update_expression",
                                 "call_expression"), fn.body_start, fn.body_end):
        if stmts.start <= node.start_byte < stmts.end:
            continue
        if node.type == "call_expression":
            args = node.child_by_field_name("arguments")
            parts = [a for a in (args.named_children if args is not None else [])
                     if a.type != "comment"]
            hit = next((r for r, fam in families.items()
                        if any(_hands_family(ctx, fn, a, fam) for a in parts)), None)
            doing = "hands it to a call"
        else:
            target = node.child_by_field_name("left" if node.type == "assignment_expression"
                                              else "argument")
            if target is None or unparen(target).type == "identifier":
                continue
            roots = pointer_roots(target, src)
            hit = next((r for r, fam in families.items() if roots & fam), None)
            doing = "writes it"
        if hit is not None:
            return _no(ctx, f"`{text_of(src, reads[hit])}` ({unit.where(reads[hit].start_byte)}) "
                       f"reads memory that `{text_of(src, node)}` ({unit.where(node.start_byte)})"
                       f" {doing} outside the loop: a thread ahead of another may change it "
                       "under its reads", node.start_byte)
    return None
