"""Guard predicates about threads, blocks and shared memory: the thread's linear index, the
block's size, barriers every thread reaches, warp intrinsics, shared memory that fits,
block-wide cooperation, indices a private copy holds (``klc.analysis.launch``)."""

from __future__ import annotations

import math
import re
from typing import Any

from tree_sitter import Node

from klc.analysis.constants import (
    COMPARISONS,
    Evaluator,
    block_dims,
    constant_of,
    kernel_spec,
    launch_block,
    number_arg,
    spec_for,
)
from klc.analysis.declarations import lookup
from klc.analysis.launch import (
    BLOCK_BARRIER,
    SMEM_DEFAULT,
    SMEM_OPTIN,
    condition_of,
    field_of,
    is_linear_index,
    shared_bytes,
    spec_elements,
    strip_casts,
    taint_words,
    taints,
    thread_condition_above,
    thread_dependent,
)
from klc.analysis.tree import (
    binding_node,
    cited,
    in_span,
    nodes_of,
    nodes_within,
    operator_of,
    quoted,
    snippet,
    text_of,
    unit_memo,
    unparen,
)
from klc.analysis.types import norm_type, type_of
from klc.analysis.writes import is_assigned, set_once
from klc.cuda.model import Function, Unit
from klc.cuda.parse import parse_bytes
from klc.cuda.syntax import LOOP_TYPES
from klc.errors import KlcError
from klc.guards.macros import file_definitions
from klc.guards.registry import (
    ArgSpec,
    GuardContext,
    Verdict,
    _kernel_region,
    _metavar,
    _no,
    _region,
    _region_arg,
    _unknown,
    _yes,
    predicate,
)
from klc.match import Binding
from klc.spec import evaluate_int, launch_dims


@predicate("thread_linear_index", _metavar("$E"), reads=("arguments", "declarations"))
def thread_linear_index(ctx: GuardContext, e: Binding) -> Verdict:
    """$E is the global thread index ``blockIdx.x * blockDim.x + threadIdx.x`` (operands in
    any order), or a variable initialised to it and never reassigned."""
    node = binding_node(e)
    src = ctx.unit.source
    if node is None:
        return _no(ctx, f"{quoted(e)} is a sequence, not an expression", e.start)
    if is_linear_index(node, src):
        return _yes(f"{quoted(e)} is the thread's linear index", e.start)
    bare = strip_casts(node, src)
    alias = _with_thread_local(ctx, bare, e.start)
    if alias:
        return _yes(f"{quoted(e)} is the thread's linear index ({alias})", e.start)
    if bare.type == "identifier":
        name = text_of(src, bare)
        decl, why = set_once(ctx, name, e.start)
        if decl is not None and decl.init is not None and (
                is_linear_index(decl.init, src)
                or _with_thread_local(ctx, strip_casts(decl.init, src), decl.start)):
            if why:
                return _no(ctx, f"`{name}` is initialised to the thread's linear index but "
                           f"{why}", e.start)
            return _yes(f"`{name}` = the thread's linear index "
                        f"({cited(ctx.unit, decl.start, decl.end)})", e.start)
        if decl is not None:
            return _no(ctx, f"`{name}` is not the thread's linear index "
                       f"({cited(ctx.unit, decl.start, decl.end)})", e.start)
    return _no(ctx, f"{quoted(e)} is not blockIdx.x * blockDim.x + threadIdx.x "
               f"({ctx.unit.where(e.start)})", e.start)


def _with_thread_local(ctx: GuardContext, node: Node, at: int) -> str:
    """``blockIdx.x * blockDim.x + t`` (terms and factors in any order) where ``t`` is a
    local that ``block_thread_index`` accepts (``int tid = threadIdx.x;``, never
    reassigned): why it holds, '' when it does not."""
    src = ctx.unit.source
    if node.type != "binary_expression" or operator_of(node) != "+":
        return ""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    for prod, t in ((left, right), (right, left)):
        if prod is None or t is None:
            continue
        prod, t = strip_casts(prod, src), strip_casts(t, src)
        if t.type != "identifier" or prod.type != "binary_expression" or \
                operator_of(prod) != "*":
            continue
        a, b = prod.child_by_field_name("left"), prod.child_by_field_name("right")
        if a is None or b is None or not any(
                field_of(strip_casts(p, src), src, "blockIdx", "x")
                and field_of(strip_casts(q, src), src, "blockDim", "x")
                for p, q in ((a, b), (b, a))):
            continue
        v = block_thread_index(ctx, Binding("$T", t.start_byte, t.end_byte, text_of(src, t),
                                            (t,)))
        if v.ok and not v.unknown:
            return v.reason
    return ""


_INDEX_TYPES = frozenset({"int", "unsigned", "unsigned int", "signed", "signed int", "long",
                          "unsigned long", "long long", "unsigned long long", "size_t",
                          "std::size_t", "int32_t", "uint32_t", "int64_t", "uint64_t"})


@predicate("block_thread_index", _metavar("$T"), reads=("arguments", "declarations"))
def block_thread_index(ctx: GuardContext, t: Binding) -> Verdict:
    """$T is the thread's index in its block, ``threadIdx.x`` (casts allowed), or a local
    of an integer type of at least 32 bits initialised to it and never reassigned
    (``unsigned int tid = threadIdx.x;``)."""
    node = binding_node(t)
    src = ctx.unit.source
    if node is None:
        return _no(ctx, f"{quoted(t)} is a sequence, not an expression", t.start)
    if field_of(node, src, "threadIdx"):
        return _yes(f"{quoted(t)} is threadIdx.x", t.start)
    bare = strip_casts(node, src)
    if bare.type == "identifier":
        name = text_of(src, bare)
        decl = lookup(ctx, name, t.start)
        fn = ctx.function
        if decl is None or decl.origin != "local" or decl.init is None \
                or not field_of(decl.init, src, "threadIdx"):
            where = f" ({cited(ctx.unit, decl.start, decl.end)})" if decl is not None else ""
            return _no(ctx, f"`{name}` is not a local initialised to threadIdx.x{where}",
                       t.start)
        if decl.pointer or decl.reference or norm_type(decl.base) not in _INDEX_TYPES:
            return _no(ctx, f"`{name}` has type {decl.base}, not an integer type that holds "
                       f"threadIdx.x ({cited(ctx.unit, decl.start, decl.end)})", t.start)
        if fn is not None and is_assigned(ctx, name, decl.end, fn.body_end):
            return _no(ctx, f"`{name}` is initialised to threadIdx.x but reassigned later "
                       f"({cited(ctx.unit, decl.start, decl.end)})", t.start)
        return _yes(f"`{name}` = threadIdx.x ({cited(ctx.unit, decl.start, decl.end)})",
                    t.start)
    return _no(ctx, f"{quoted(t)} is not threadIdx.x ({ctx.unit.where(t.start)})", t.start)


@predicate("block_size_known", reads=("spec",))
def block_size_known(ctx: GuardContext) -> Verdict:
    """The threads per block of the enclosing kernel are known, exactly (spec, launches in
    this file) or as an upper bound (__launch_bounds__)."""
    exact, bound, how = block_dims(ctx)
    if exact is not None:
        return _yes(f"block {exact[0]}×{exact[1]}×{exact[2]} from {how}", ctx.match.start)
    if bound is not None:
        return _yes(f"at most {bound} threads per block from {how}", ctx.match.start)
    return _no(ctx, f"the block size of `{ctx.function.name if ctx.function else '?'}` is "
               f"unknown: {how}")


@predicate("block_size", ArgSpec("op", frozenset({"op", "string"})),
           ArgSpec("N", frozenset({"int", "hole"})), reads=("spec",))
def block_size(ctx: GuardContext, op: str, n: Any) -> Verdict:
    """The threads per block compare with N: ``block_size(<=, 1024)``; an upper bound from
    __launch_bounds__ proves only < and <=."""
    want = number_arg(ctx, n)
    if op not in COMPARISONS or want is None:
        return _no(ctx, f"block_size: cannot compare with {op} {n!r}")
    exact, bound, how = block_dims(ctx)
    if exact is not None:
        total = math.prod(exact)
        if COMPARISONS[op](total, want):
            return _yes(f"{total} threads per block {op} {want} ({how})", ctx.match.start)
        return _no(ctx, f"the block has {total} threads ({how}), and not {total} {op} {want}")
    if bound is not None:
        if op in ("<", "<=") and COMPARISONS[op](bound, want):
            return _yes(f"at most {bound} threads per block {op} {want} ({how})",
                        ctx.match.start)
        return _no(ctx, f"only an upper bound of {bound} threads per block is known ({how}); "
                   f"it does not prove block size {op} {want}")
    return _no(ctx, f"the block size is unknown: {how}")


@predicate("block_dim", ArgSpec("axis", frozenset({"name"}), frozenset({"x", "y", "z"})),
           ArgSpec("op", frozenset({"op", "string"})),
           ArgSpec("N", frozenset({"int", "hole"})), reads=("spec",))
def block_dim(ctx: GuardContext, axis: str, op: str, n: Any) -> Verdict:
    """The block's extent along AXIS (x, y or z) compares with N, known exactly (the spec's
    block, or every launch in this file): ``block_dim(y, ==, ?t)`` before a rewrite that
    divides block.y."""
    exact, _bound, how = block_dims(ctx)
    return compare_extent(ctx, "block", exact, how, axis, op, n)


@predicate("block_dim_product", ArgSpec("axis", frozenset({"name"}), frozenset({"x", "y", "z"})),
           ArgSpec("A", frozenset({"int", "hole"})), ArgSpec("B", frozenset({"int", "hole"})),
           reads=("spec",))
def block_dim_product(ctx: GuardContext, axis: str, a: Any, b: Any) -> Verdict:
    """The block's extent along AXIS is A * B, known exactly: a 1-D block of ``?t * ?t``
    threads that a rewrite reshapes into ``?t`` x ``?t`` (``block_dim_product(x, ?t, ?t)``);
    ``klc.fill.shape.site_holes`` solves it for the holes at a site."""
    p, q = number_arg(ctx, a), number_arg(ctx, b)
    if not isinstance(p, int) or not isinstance(q, int):
        return _no(ctx, f"block_dim_product: {a!r} and {b!r} are not both known integers")
    return compare_extent(ctx, "block", block_dims(ctx)[0], block_dims(ctx)[2], axis, "==",
                          p * q)


def compare_extent(ctx: GuardContext, dim: str, exact: tuple[int, int, int] | None, how: str,
                   axis: str, op: str, n: Any) -> Verdict:
    """``block_dim``'s and ``grid_dim``'s verdict: the launch's ``dim`` ("block", "grid")
    extent along AXIS, known exactly (``exact``, from ``how``), compared with N."""
    want = number_arg(ctx, n)
    if op not in COMPARISONS or not isinstance(want, int):
        return _no(ctx, f"{dim}_dim: cannot compare with {op} {n!r}")
    if exact is None:
        return _no(ctx, f"the {dim}'s {axis} extent is not known exactly: {how}")
    have = exact["xyz".index(axis)]
    if COMPARISONS[op](have, want):
        return _yes(f"{dim}.{axis} = {have} {op} {want} ({how})", ctx.match.start)
    return _no(ctx, f"{dim}.{axis} is {have} ({how}), and not {have} {op} {want}")


@predicate("block_extent", _metavar("$E"),
           ArgSpec("axis", frozenset({"name"}), frozenset({"x", "y", "z"})),
           reads=("arguments", "declarations", "spec"))
def block_extent(ctx: GuardContext, e: Binding, axis: str) -> Verdict:
    """$E is the block's extent along AXIS: ``blockDim.<axis>`` itself, or a compile-time
    constant (a literal, a #define, a template argument the spec gives) equal to it, the
    block known exactly (the spec's block, or every launch in this file). The index
    ``blockIdx.x * TILE + threadIdx.x`` is then the thread's global column."""
    if re.sub(r"\s+", "", e.text) == f"blockDim.{axis}":
        return _yes(f"{quoted(e)} is the block's {axis} extent", e.start)
    v, why, _definite, _sources = constant_of(ctx, e)
    if not isinstance(v, int):
        return _no(ctx, f"{quoted(e)} is neither blockDim.{axis} nor a known constant: {why}")
    exact, _bound, how = block_dims(ctx)
    if exact is None:
        return _no(ctx, f"the block's {axis} extent is not known exactly: {how}")
    have = exact["xyz".index(axis)]
    if have == v:
        return _yes(f"{quoted(e)} = {v} = block.{axis} ({how})", e.start)
    return _no(ctx, f"{quoted(e)} = {v}, and block.{axis} is {have} ({how})")


@predicate("block_fixed", ArgSpec("axis", frozenset({"name"}), frozenset({"x", "y", "z"})),
           reads=("spec",))
def block_fixed(ctx: GuardContext, axis: str) -> Verdict:
    """The block's extent along AXIS is one constant wherever the file says the kernel
    runs: the spec's block and every host launch of the kernel in this file (each that
    there is, at least one) give the same number, the spec's read without the sizes (a
    block of ``min(rows, 8)`` is not one constant). Stricter than ``block_dim``, which takes
    the spec's block alone where there is one: code that reads a constant where it read
    ``blockDim.<axis>`` is right only at launches of that extent, so a launch whose block
    is a run-time value (an argument) or differs along AXIS from the spec or from another
    launch is refused."""
    fn = ctx.function
    if fn is None:
        return _no(ctx, "the match is not inside a function")
    i = "xyz".index(axis)
    seen: list[tuple[int, str]] = []
    spec = spec_for(ctx)
    inner = kernel_spec(spec)
    if spec is not None and inner is not None and inner.block:
        said = "[" + ", ".join(str(e) for e in inner.block) + "]"
        try:  # with no sizes: a block that reads a size is not one constant at every size
            dims = launch_dims(tuple(str(e) for e in inner.block), spec.env({}))
        except Exception as e:  # (the spec's expression language: an unknown name, ...)
            return _no(ctx, f"the spec's block {said} is not one constant at every size: {e}")
        seen.append((dims[i], f"the spec's block {said}"))
    unit = ctx.unit
    for lc in unit.launches:
        if lc.kernel != fn.name or len(lc.config) < 2:
            continue
        where = f"the launch at {unit.where(lc.start)}"
        dims = launch_block(ctx, lc.config[1], lc.start)
        if dims is None:
            return _no(ctx, f"{where} gives block `{' '.join(lc.config[1].split())}`, not a "
                       "constant", lc.start)
        seen.append((dims[i], where))
    if not seen:
        return _no(ctx, f"no spec block and no launch of `{fn.name}` in this file: its "
                   f"block.{axis} is not fixed")
    first, how = seen[0]
    for v, other in seen[1:]:
        if v != first:
            return _no(ctx, f"block.{axis} is {first} by {how} and {v} by {other}")
    return _yes(f"block.{axis} = {first} by " + (how if len(seen) == 1 else
                f"{how} and {len(seen) - 1} launch(es) in this file"), ctx.match.start)


_IDENTIFIER = frozenset({"identifier"})
_THREAD_WORDS = re.compile(
    rb"\b(threadIdx|blockIdx|blockDim|gridDim|__syncthreads\w*|__syncwarp|__shfl\w*|"
    rb"__ballot_sync|__any_sync|__all_sync|__uni_sync|__match_\w+|__activemask|__shared__|"
    rb"__reduce_\w+_sync|cooperative_groups|this_thread_block|this_grid)\b")


@predicate("thread_free", ArgSpec("$$$S", frozenset({"metavar", "sequence"})),
           reads=("arguments",))
def thread_free(ctx: GuardContext, stmts: Binding) -> Verdict:
    """The code bound to $$$S (statements or an expression), the macros it uses and the
    functions it calls (defined in this file, followed through the functions they call) read
    neither the thread's nor the block's coordinates and share no work in the block: no
    threadIdx, blockIdx, blockDim, gridDim, barrier, warp intrinsic, __shared__ or
    cooperative groups. (`not mentions($$$S, threadIdx)` reads the code's own text only, not
    a helper or a macro.) Functions the file does not define (the math library, intrinsics)
    are taken as they are named."""
    unit, src = ctx.unit, ctx.unit.source
    own = _THREAD_WORDS.search(src[stmts.start:stmts.end])
    if own:
        return _no(ctx, f"{quoted(stmts)} reads `{own.group(1).decode()}`", stmts.start)
    defs, macros = file_definitions(unit)
    words = {text_of(src, n) for n in nodes_within(unit, _IDENTIFIER, stmts.start, stmts.end)}
    for name in sorted(words & set(macros)):
        hit = _THREAD_WORDS.search(macros[name])
        if hit:
            return _no(ctx, f"the macro `{name}` that {quoted(stmts)} uses reads "
                       f"`{hit.group(1).decode()}`", stmts.start)
    todo = []
    for node in in_span(nodes_of(unit, "call_expression"), stmts.start, stmts.end):
        callee = node.child_by_field_name("function")
        if callee is not None:
            todo.append(text_of(src, callee).split("<")[0].strip())
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for f in defs.get(name, []):
            body = src[f.body_start:f.body_end]
            hit = _THREAD_WORDS.search(body)
            if hit is None:
                hit = next((h for w, v in macros.items()
                            if re.search(rb"\b" + w.encode() + rb"\b", body)
                            for h in [_THREAD_WORDS.search(v)] if h), None)
            if hit is not None:
                return _no(ctx, f"`{name}` ({unit.where(f.start)}), which {quoted(stmts)} "
                           f"calls, reads `{hit.group(1).decode()}`", f.start)
            todo.extend(c.name for c in f.calls)
    return _yes(f"{quoted(stmts)} reads no thread or block coordinate, nor do the helpers and "
                "macros it uses", stmts.start)


@predicate("square_block", reads=("spec",))
def square_block(ctx: GuardContext) -> Verdict:
    """The block is as wide as it is tall, blockDim.x == blockDim.y, known exactly (the
    spec's block, or every launch in this file): the thread (x, y) of a block has a partner
    (y, x) in it, which a tile transpose hands each element to."""
    exact, _bound, how = block_dims(ctx)
    if exact is None:
        return _no(ctx, f"the block's shape is not known exactly: {how}")
    if exact[0] == exact[1]:
        return _yes(f"the block is square: {exact[0]} x {exact[1]} ({how})", ctx.match.start)
    return _no(ctx, f"the block is {exact[0]} x {exact[1]} ({how}): not square")


@predicate("sync_uniform", _region_arg(), reads=("position",))
def sync_uniform(ctx: GuardContext, region: str = "kernel") -> Verdict:
    """Every block-wide barrier (__syncthreads) in REGION is reached by all threads: none is
    under an if/loop/?:/switch whose condition depends on threadIdx, directly or through a
    variable, and no thread-dependent break/continue/return skips one."""
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    fn = ctx.function
    assert fn is not None
    # the verdict depends on the region alone (not on the match in it): once per region
    return unit_memo(ctx.unit, f"sync_uniform:{fn.start}:{start}:{end}:{label}",
                     lambda: _sync_uniform(ctx, fn, start, end, label))


def _sync_uniform(ctx: GuardContext, fn: Function, start: int, end: int, label: str) -> Verdict:
    unit, src = ctx.unit, ctx.unit.source
    barriers = [c for c in fn.barriers if start <= c.start < end
                and BLOCK_BARRIER.match(c.name)]
    tainted = thread_dependent(ctx, fn) if barriers else {}
    for bar in barriers:
        node = _call_at(unit, bar.start, bar.end)
        while node is not None and node.start_byte > fn.body_start:
            parent = node.parent
            if parent is None:
                break
            cond = condition_of(parent, node)
            if cond is not None and taints(cond, src, tainted):
                why = taint_words(cond, src, tainted)
                return _no(ctx, f"`{bar.name}()` ({unit.where(bar.start)}) is under "
                           f"`{snippet(text_of(src, cond))}` ({unit.where(cond.start_byte)}), "
                           f"which depends on the thread{why}", bar.start)
            if parent.type in LOOP_TYPES:
                for jump in in_span(nodes_of(unit, "break_statement", "continue_statement",
                                             "return_statement"), parent.start_byte,
                                parent.end_byte):
                    guard = thread_condition_above(jump, parent, src, tainted)
                    if guard is not None:
                        return _no(ctx, f"`{snippet(text_of(src, jump))}` "
                                   f"({unit.where(jump.start_byte)}) under the thread-dependent "
                                   f"`{snippet(text_of(src, guard))}` leaves the loop around "
                                   f"`{bar.name}()` ({unit.where(bar.start)})", jump.start_byte)
            node = parent
    if not barriers:
        return _yes(f"no block-wide barrier in {label}", start)
    return _yes(f"every barrier in {label} is reached by all threads", start)


def _call_at(unit: Unit, start: int, end: int) -> Node | None:
    """The innermost call expression that starts at ``start`` and holds [start, end) (a
    barrier's call), found from the smallest node there up."""
    node = unit.root.descendant_for_byte_range(start, end)
    while node is not None and node.start_byte == start:
        if node.type == "call_expression":
            return node
        node = node.parent
    return None


@predicate("no_early_return_before_barrier", _region_arg(), reads=("position",))
def no_early_return_before_barrier(ctx: GuardContext, region: str = "kernel") -> Verdict:
    """No ``return`` in REGION comes before a later __syncthreads: a thread that leaves
    early never arrives at the barrier the others wait at."""
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    fn = ctx.function
    assert fn is not None
    unit = ctx.unit
    barriers = [c for c in fn.barriers if BLOCK_BARRIER.match(c.name)]
    if not barriers:
        return _yes(f"no block-wide barrier in `{fn.name}`", start)
    last = barriers[-1]
    for ret in in_span(nodes_of(unit, "return_statement"), start, end):
        if ret.start_byte < last.start and fn.body_start <= ret.start_byte < fn.body_end:
            return _no(ctx, f"`{snippet(unit.text(ret))}` ({unit.where(ret.start_byte)}) "
                       f"comes before `{last.name}()` ({unit.where(last.start)}) in {label}",
                       ret.start_byte)
    return _yes(f"no return before the last barrier in {label}", start)


@predicate("uses_warp_intrinsics", _region_arg(), reads=("position",))
def uses_warp_intrinsics(ctx: GuardContext, region: str = "kernel") -> Verdict:
    """REGION calls a warp-level intrinsic (__shfl*_sync, __ballot_sync, cooperative-groups
    tile shuffles...)."""
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    fn = ctx.function
    assert fn is not None
    used = [c for c in fn.warp_intrinsics if start <= c.start < end]
    if used:
        return _yes(f"{label} calls {used[0].name} ({ctx.unit.where(used[0].start)})",
                    used[0].start)
    return _no(ctx, f"{label} calls no warp intrinsic", start)


@predicate("smem_fits", ArgSpec("limit", frozenset({"int", "name", "hole"}),
                                frozenset({"default", "optin"}), optional=True),
           reads=("rule", "layout", "spec"), facts=("shared",))
def smem_fits(ctx: GuardContext, limit: int | str = "default") -> Verdict:
    """The kernel's static __shared__ bytes, plus what the rule's rewrite declares (with the
    hole values filled) and the spec's dynamic shared memory, fit LIMIT bytes (default
    48 KiB; ``optin``: 227 KiB, the sm_90 opt-in maximum)."""
    fn = ctx.function
    if fn is None:
        return _no(ctx, "the match is not inside a function")
    cap = SMEM_OPTIN if limit == "optin" else SMEM_DEFAULT if limit == "default" else limit
    if not isinstance(cap, int):
        return _no(ctx, f"smem_fits: limit {limit!r} is not a number of bytes")
    ev = Evaluator(ctx)
    have, why = shared_bytes(fn.shared, ev)
    if have is None:
        return _unknown(ctx, f"shared memory of `{fn.name}`: {why}")
    parts = [f"{have} B declared in `{fn.name}`"]
    total = have
    rule = getattr(ctx.match, "rule", None)
    for edit in getattr(rule, "edits", ()) or ():
        template = getattr(edit, "template", None)
        if not template or "__shared__" not in template:
            continue
        missing = [h for h in re.findall(r"\?([A-Za-z_]\w*)", template) if h not in ctx.holes]
        if missing:
            return Verdict(True, f"smem_fits: depends on ?{missing[0]}", ctx.match.start, True)
        if ctx.render is None:
            return _unknown(ctx, "the rewrite's __shared__ declarations: no template filler "
                            "given (GuardContext.render)")
        try:  # the declarations exactly as the rewrite writes them (values in parentheses
            text = ctx.render(template, ctx.match, ctx.holes)  # where the template needs them)
        except KlcError as e:
            return _unknown(ctx, f"the rewrite's __shared__ declarations: {e}")
        inserted = parse_bytes(f"__global__ void __klc_smem__() {{\n{text}\n}}\n".encode(),
                               "<rewrite>")
        if not inserted.functions:
            return _unknown(ctx, "the rewrite's __shared__ declarations do not parse")
        add, why = shared_bytes(inserted.functions[0].shared, ev)
        if add is None:
            return _unknown(ctx, f"shared memory the rewrite adds: {why}")
        total += add
        parts.append(f"{add} B from the rewrite")
    spec = spec_for(ctx)
    inner = kernel_spec(spec)
    dyn = inner.shared if inner is not None else None
    if dyn:
        try:
            extra = evaluate_int(dyn, spec.env() if spec is not None else {})
        except Exception:
            return _unknown(ctx, f"the spec's dynamic shared memory `{dyn}` has no value")
        total += extra
        parts.append(f"{extra} B dynamic (spec)")
    words = " + ".join(parts)
    if total <= cap:
        return _yes(f"{words} = {total} B fits {cap} B", ctx.match.start)
    return _no(ctx, f"{words} = {total} B exceeds {cap} B "
               f"({cited(ctx.unit, fn.start, fn.body_start)})")


@predicate("no_block_sharing", _region_arg(), reads=("position",))
def no_block_sharing(ctx: GuardContext, region: str = "kernel") -> Verdict:
    """REGION has no block-wide barrier (__syncthreads) and declares no __shared__ memory:
    the warps of a block share nothing, so they may be packed into one block or split into
    separate ones without changing what they compute."""
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    fn = ctx.function
    assert fn is not None
    unit = ctx.unit
    bar = next((c for c in fn.barriers if start <= c.start < end
                and BLOCK_BARRIER.match(c.name)), None)
    if bar is not None:
        return _no(ctx, f"`{bar.name}()` ({unit.where(bar.start)}) is a block-wide barrier in "
                   f"{label}", bar.start)
    sh = next((s for s in fn.shared if start <= s.start < end), None)
    if sh is not None:
        return _no(ctx, f"`__shared__ {sh.type} {sh.name}` ({unit.where(sh.start)}) is shared "
                   f"by the block, in {label}", sh.start)
    return _yes(f"no __syncthreads and no __shared__ memory in {label}", start)


@predicate("block_size_multiple", ArgSpec("N", frozenset({"int", "hole"})), reads=("spec",))
def block_size_multiple(ctx: GuardContext, n: Any) -> Verdict:
    """The threads per block are known exactly and are a multiple of N (whole warps:
    ``block_size_multiple(32)``)."""
    want = number_arg(ctx, n)
    if not isinstance(want, int) or want < 1:
        return _no(ctx, f"block_size_multiple: {n!r} is not a positive integer")
    exact, _bound, how = block_dims(ctx)
    if exact is None:
        return _no(ctx, f"the exact block size is unknown: {how}")
    total = math.prod(exact)
    if total % want:
        return _no(ctx, f"the block has {total} threads ({how}), not a multiple of {want}")
    return _yes(f"{total} threads per block, a multiple of {want} ({how})")


# ---- predicates for privatisation (passes/privatize.rule's inverse): may the block's
# threads work together at this point of the kernel, and does every index fit a private copy

_INDEX_TYPE_LIMIT = {"bool": 2, "unsigned char": 256, "uint8_t": 256, "unsigned short": 65536,
                     "uint16_t": 65536}


@predicate("index_below", _metavar("$V"), _metavar("$G"), ArgSpec("N", frozenset({"int",
                                                                                  "hole"})),
           reads=("declarations", "layout", "spec"))
def index_below(ctx: GuardContext, v: Binding, g: Binding, n: Any) -> Verdict:
    """Every value of $V, an index into buffer $G, lies in [0, N): the type of $V bounds it
    (an unsigned char is below 256, an unsigned short below 65536), or the spec allocates the
    kernel parameter $G with at most N elements at every size it runs (a correct kernel
    indexes inside its buffers, so that a private copy of N elements holds every index)."""
    want = number_arg(ctx, n)
    if not isinstance(want, int):
        return _no(ctx, f"index_below: {n!r} is not an integer")
    node = binding_node(v)
    typ = type_of(ctx, node) if node is not None else None
    if typ is not None and not typ.pointer:
        limit = _INDEX_TYPE_LIMIT.get(norm_type(typ.base))
        if limit is not None and limit <= want:
            return _yes(f"{quoted(v)} is an {typ.base}: below {limit} <= {want}", v.start)
    gnode = binding_node(g)
    fn = ctx.function
    if gnode is None or unparen(gnode).type != "identifier" or fn is None:
        return _no(ctx, f"{quoted(g)} is not a buffer parameter ({ctx.unit.where(g.start)})",
                   g.start)
    name = text_of(ctx.unit.source, unparen(gnode))
    decl = lookup(ctx, name, g.start)
    if decl is None or decl.origin != "parameter":
        return _no(ctx, f"{quoted(g)} is not a parameter of {fn.name}", g.start)
    elements, how = spec_elements(ctx, name)
    typed = f"{quoted(v)} has type {typ.base}, which does not bound it below {want}; " \
        if typ is not None else ""
    if elements is None:
        return _no(ctx, f"{typed}the size of `{name}` is unknown: {how}", v.start)
    if elements <= want:
        return _yes(f"{how}: at most {elements} elements <= {want}, so {quoted(v)} < {want}",
                    v.start)
    return _no(ctx, f"{typed}{how}: {elements} elements, more than {want}", v.start)


@predicate("block_cooperative", _region_arg(), reads=("position", "spec"))
def block_cooperative(ctx: GuardContext, region: str = "anchor") -> Verdict:
    """Every thread of a one-dimensional block reaches REGION: the block is known to be
    blockDim.y = blockDim.z = 1 (the spec, or every launch in the file), REGION starts at the
    top level of a kernel body (under no branch or loop), and no return comes before its
    end. Code put around REGION may then hold __syncthreads and share work over the block
    (a loop from threadIdx.x by blockDim.x visits every index once per block)."""
    span = _kernel_region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label, fn = span
    exact, _bound, how = block_dims(ctx)
    if exact is None:
        return _no(ctx, f"the shape of the block of `{fn.name}` is unknown: {how}")
    if exact[1] != 1 or exact[2] != 1:
        return _no(ctx, f"the block is {exact[0]}×{exact[1]}×{exact[2]} ({how}): "
                   "threadIdx.x does not number its threads")
    if start != fn.body_start:
        nodes = ctx.match.nodes
        first = nodes[0] if nodes and region == "anchor" else None
        if first is None:
            node = ctx.unit.tree.root_node.descendant_for_byte_range(start, start)
            while node is not None and node.parent is not None and \
                    node.parent.start_byte != fn.body_start:
                node = node.parent
            first = node
        parent = first.parent if first is not None else None
        if parent is None or parent.start_byte != fn.body_start or parent.type != \
                "compound_statement":
            return _no(ctx, f"{label} is not at the top level of `{fn.name}`'s body: a "
                       "branch or a loop around it may keep threads away", start)
    for ret in in_span(nodes_of(ctx.unit, "return_statement"), fn.body_start, fn.body_end):
        if ret.start_byte < end and not (region == "anchor"
                                         and _matched_early_return(ctx, ret, start, end)):
            return _no(ctx, f"`{snippet(ctx.unit.text(ret))}` ({ctx.unit.where(ret.start_byte)}) "
                       f"comes before the end of {label}: a thread that leaves never reaches "
                       "a barrier put there", ret.start_byte)
    return _yes(f"a {exact[0]}-thread one-dimensional block ({how}) reaches {label} whole",
                start)


def _matched_early_return(ctx: GuardContext, ret: Any, start: int, end: int) -> bool:
    """Whether ``ret`` is the ``return`` of an early return the anchor matched as a whole
    (the isomorphism early_return: ``if (i >= n) return;`` and the rest of the kernel body
    read as ``if (i < n) { rest }``): the bare or braced body of an ``if`` at the top level
    of the kernel body, inside the match, which runs to the body's last statement, and in no
    metavariable's binding. The rewrite of the matched code writes the anchor's ``if``
    spelling instead, so no thread leaves before the code it puts there."""
    fn = ctx.function
    stmt = ret.parent
    if stmt is not None and stmt.type == "compound_statement" and stmt.named_child_count == 1:
        stmt = stmt.parent
    if stmt is None or stmt.type != "if_statement" or stmt.parent is None \
            or fn is None or stmt.parent.start_byte != fn.body_start:
        return False
    if stmt.start_byte < start or stmt.end_byte > end:
        return False
    last = [c for c in stmt.parent.named_children if c.type != "comment"]
    if not last or last[-1].end_byte > end:
        return False
    return not any(b.start <= ret.start_byte < b.end
                   for b in ctx.match.bindings.values())


@predicate("ends_kernel", _region_arg(), reads=("position",))
def ends_kernel(ctx: GuardContext, region: str = "anchor") -> Verdict:
    """REGION ends a kernel's body: it starts at the top level of the body (under no branch
    or loop) and nothing but comments follows it. No code of the thread runs after it, so a
    rewrite may leave its variables with other values (a loop that advances the index)."""
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    fn = ctx.function
    why = _ends_kernel(ctx, fn, start, end, label)
    if why is not None:
        return why
    assert fn is not None
    return _yes(f"{label} ends `{fn.name}`, at the top level of its body", start)


def top_level_statement(unit: Unit, fn: Function, start: int) -> tuple[Node, Node] | None:
    """(the statement of ``fn``'s body that starts at ``start``, the body), or None when no
    statement at the top level of the body (under no branch or loop) starts there."""
    node = unit.tree.root_node.descendant_for_byte_range(start, start)
    while node is not None and node.parent is not None and \
            node.parent.start_byte != fn.body_start:
        node = node.parent
    body = node.parent if node is not None else None
    if node is None or body is None or body.type != "compound_statement" \
            or node.start_byte != start:
        return None
    return node, body


def _ends_kernel(ctx: GuardContext, fn: Function | None, start: int, end: int,
                 label: str) -> Verdict | None:
    if fn is None or not fn.is_kernel:
        return _no(ctx, f"{label} is not inside a kernel")
    unit = ctx.unit
    top = top_level_statement(unit, fn, start)
    if top is None:
        return _no(ctx, f"{label} is not at the top level of `{fn.name}`'s body: a branch or "
                   "a loop around it may keep threads away", start)
    body = top[1]
    after = [c for c in body.named_children if c.start_byte >= end and c.type != "comment"]
    if after:
        return _no(ctx, f"`{snippet(unit.text(after[0]))}` ({unit.where(after[0].start_byte)}) "
                   f"follows {label} in `{fn.name}`: {label} does not end the kernel",
                   after[0].start_byte)
    return None


@predicate("kernel_tail", _region_arg(), reads=("position",))
def kernel_tail(ctx: GuardContext, region: str = "anchor") -> Verdict:
    """REGION is the tail of a kernel's body, run by every thread of the block: it ends the
    body (``ends_kernel``) and no ``return`` or ``goto`` comes before its end (but the
    ``return`` of an early return the anchor matched whole, which its rewrite writes as the
    anchor's ``if``: ``_matched_early_return``). A barrier put
    in REGION's top level is then reached by all threads, and no code of the thread runs
    after it (so what a rewrite moves between threads is not read back by the thread later)."""
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    fn = ctx.function
    why = _ends_kernel(ctx, fn, start, end, label)
    if why is not None:
        return why
    assert fn is not None
    unit = ctx.unit
    for jump in in_span(nodes_of(unit, "return_statement", "goto_statement"), fn.body_start,
                        fn.body_end):
        if jump.start_byte < end and not (
                region == "anchor" and jump.type == "return_statement"
                and _matched_early_return(ctx, jump, start, end)):
            return _no(ctx, f"`{snippet(unit.text(jump))}` ({unit.where(jump.start_byte)}) "
                       f"comes before the end of {label}: a thread that leaves never reaches "
                       "a barrier put there", jump.start_byte)
    return _yes(f"{label} ends `{fn.name}`, at the top level of its body, with no return "
                "before it: every thread of the block runs it", start)
