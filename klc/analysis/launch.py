"""Launch dimensions, threads and shared memory (``klc.analysis`` layer 5, over constants).

``_block_dims``: the block's exact extent (the spec's ``block``, or every launch in the file
agreeing) or an upper bound (``__launch_bounds__``). ``_thread_dependent``: which variables
may differ between the threads of a block (a taint analysis to a fixpoint). Shared memory a
kernel declares, and the elements the spec allocates for a buffer."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tree_sitter import Node

from klc.analysis import constants
from klc.analysis.constants import _Eval, _kernel_spec, _spec_for
from klc.analysis.declarations import _function_declarations
from klc.analysis.tree import (
    Place,
    _cast_target,
    _identifiers,
    _in,
    _memo,
    _nodes,
    _operator,
    _snippet,
    _text,
    _unwrap,
)
from klc.analysis.types import SIZES, _norm_type
from klc.cuda.syntax import F_ARGUMENT, F_CONDITION, F_FIELD, F_LEFT, F_RIGHT, F_VALUE
from klc.spec import Bound, Spec, element_count, launch_dims

if TYPE_CHECKING:
    from klc.cuda.model import Function


def _field_of(node: Node, src: bytes, base: str, axis: str = "x") -> bool:
    node = _strip_casts(node, src)
    if node.type != "field_expression":
        return False
    arg, fld = node.child_by_field_id(F_ARGUMENT), node.child_by_field_id(F_FIELD)
    return arg is not None and fld is not None and _text(src, arg) == base \
        and _text(src, fld) == axis


def _strip_casts(node: Node, src: bytes) -> Node:
    while True:
        node = _unwrap(node)
        _, operand = _cast_target(node, src)
        if operand is None:
            return node
        node = operand


def index_factors(node: Node, src: bytes, axis: str | None = None) -> list[tuple[Node, Node]]:
    """For ``blockIdx.a * F + threadIdx.a`` (terms and factors in either order, casts and
    parentheses aside; ``axis`` None: threadIdx's field not checked), the (factor, other
    factor) pairs of its product, each of which may be the ``blockIdx`` side: the callers
    ask which is ``blockIdx.a`` and what the step is. Empty for any other shape."""
    node = _strip_casts(node, src)
    if node.type != "binary_expression" or _operator(node) != "+":
        return []
    left = _strip_casts(node.child_by_field_id(F_LEFT), src)
    right = _strip_casts(node.child_by_field_id(F_RIGHT), src)
    out = []
    for prod, tid in ((left, right), (right, left)):
        if not _field_of(tid, src, "threadIdx", *((axis,) if axis else ())) \
                or prod.type != "binary_expression" or _operator(prod) != "*":
            continue
        a = _strip_casts(prod.child_by_field_id(F_LEFT), src)
        b = _strip_casts(prod.child_by_field_id(F_RIGHT), src)
        out += [(a, b), (b, a)]
    return out


def _is_linear_index(node: Node, src: bytes, axis: str | None = None) -> bool:
    """``blockIdx.a * blockDim.a + threadIdx.a`` in any order of its terms and factors."""
    args = (axis,) if axis else ()
    return any(_field_of(bid, src, "blockIdx", *args) and _field_of(dim, src, "blockDim", *args)
               for bid, dim in index_factors(node, src, axis))


def _block_dims(ctx: Place) -> tuple[tuple[int, int, int] | None, int | None, str]:
    """(exact block dimensions, upper bound on threads per block, how known).

    Exact: from the spec's ``block``, or from every launch of the kernel in this file
    agreeing on a constant block. Upper bound: ``__launch_bounds__`` (a launch with more
    threads fails, so it bounds the block; it does not fix it).

    Remembered per function and spec when nothing of the match was read: launches are
    judged where they stand; a spec's block or a ``__launch_bounds__`` expression is text
    whose names resolve where the match is."""
    fn = ctx.function
    if fn is None:
        return None, None, "the match is not inside a function"
    spec = _spec_for(ctx)
    key = f"block_dims:{fn.start}:{fn.end}"
    found = ctx.unit.memo.get(key)
    if found is not None and found[0] is spec:  # (the spec object itself: no id reuse)
        return found[1]  # type: ignore[no-any-return]
    result = _find_block_dims(ctx, fn, spec)
    inner = _kernel_spec(spec)
    lb = fn.launch_bounds
    if not (inner is not None and inner.block) and (
            result[0] is not None or lb is None or lb.max_threads.strip().isdigit()):
        ctx.unit.memo[key] = (spec, result)
    return result


def _find_block_dims(ctx: Place, fn: Function, spec: Spec | Bound | None
                     ) -> tuple[tuple[int, int, int] | None, int | None, str]:
    unit = ctx.unit
    inner = _kernel_spec(spec)
    block = inner.block if inner is not None else ()
    if block:
        dims = _spec_dims(ctx, tuple(block))
        if dims is not None:
            return dims, math.prod(dims), f"the spec's block {list(block)}"
    launches = [lc for lc in unit.launches if lc.kernel == fn.name and len(lc.config) >= 2]
    launch_why = ""
    if launches:
        blocks = [_launch_block(ctx, lc.config[1], lc.start) for lc in launches]
        found = set(blocks)
        if len(found) == 1 and None not in found:
            dims = found.pop()
            assert dims is not None
            return dims, math.prod(dims), f"the launch at {unit.where(launches[0].start)}"
        unknown = next((lc for lc, b in zip(launches, blocks, strict=True) if b is None), None)
        if unknown is not None:
            launch_why = (f"the launch at {unit.where(unknown.start)} gives block "
                          f"`{' '.join(unknown.config[1].split())}`, not a constant")
        else:
            launch_why = (f"the launches of `{fn.name}` give different blocks: "
                          + ", ".join(sorted({str(list(b or ())) for b in blocks})))
    lb = fn.launch_bounds
    if lb is not None:
        ev = _Eval(ctx)
        v = ev.text(lb.max_threads)
        if isinstance(v, int):
            return None, v, f"__launch_bounds__({lb.max_threads}) ({unit.where(lb.start)})"
        return None, None, (f"__launch_bounds__({lb.max_threads}) has no known value: "
                            f"{ev.why}")
    if launch_why:
        return None, None, f"no spec block, {launch_why}, and no __launch_bounds__"
    return None, None, (f"no spec block, no launch of `{fn.name}` in this file and no "
                        "__launch_bounds__")


def _spec_dims(ctx: Place, exprs: tuple[Any, ...]) -> tuple[int, int, int] | None:
    try:
        spec = _spec_for(ctx)
        env = spec.env() if spec is not None else {}
        return launch_dims(tuple(str(e) for e in exprs), env)
    except Exception:  # an expression the spec cannot evaluate without sizes: not known
        return None


def _launch_block(ctx: Place, text: str, at: int | None = None) -> tuple[int, int, int] | None:
    m = re.fullmatch(r"\s*dim3\s*\((.*)\)\s*", text, re.S)
    parts = [p for p in m.group(1).split(",")] if m else [text]
    name = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*", text)
    if name is not None and at is not None:
        dim3 = _dim3_variable(ctx, name.group(1), at)
        if dim3 is not None:
            parts = dim3
    values = []
    for p in parts:
        v = _Eval(ctx).text(p)
        if not isinstance(v, int):
            return None
        values.append(v)
    values += [1] * (3 - len(values))
    return values[0], values[1], values[2]


def _dim3_variable(ctx: Place, name: str, at: int) -> list[str] | None:
    """The extents a launch's block variable ``name`` holds at offset ``at``: the function
    around the launch declares it once, ``dim3 name(a, b)`` (or ``{a, b}``, ``= dim3(a, b)``),
    before the launch, and uses it nowhere but in launch configurations (``<<<...>>>``): no
    assignment, no field set, no address taken, no call that could take it by reference.
    None otherwise."""
    unit = ctx.unit
    fn = next((f for f in unit.functions if f.body_start <= at < f.body_end), None)
    if fn is None:
        return None
    body = unit.source[fn.body_start:fn.body_end].decode("utf-8", "replace")
    n = re.escape(name)
    decls = list(re.finditer(rf"\bdim3\s+{n}\s*(?:\(([^()]*)\)|\{{([^{{}}]*)\}}|=\s*dim3\s*"
                             rf"\(([^()]*)\)|=\s*\{{([^{{}}]*)\}})\s*;", body))
    if len(decls) != 1 or re.search(rf"\b{n}\b", body[:decls[0].start()]) \
            or fn.body_start + decls[0].end() > at:
        return None
    if re.search(rf"\b{n}\b", re.sub(r"<<<.*?>>>", " ", body[decls[0].end():], flags=re.S)):
        return None
    args = next(g for g in decls[0].groups() if g is not None)
    return args.split(",")


def _exact_extent(place: Place) -> tuple[tuple[int, int, int] | None, str]:
    exact, _, how = _block_dims(place)
    return exact, how


constants.block_extent = _exact_extent


def _thread_dependent(ctx: Place, fn: Function) -> dict[str, str]:
    """Variables of ``fn`` whose value may differ between threads of a block, each with the
    assignment that makes it so (a taint analysis to a fixpoint over the function)."""

    def build() -> dict[str, str]:
        unit, src = ctx.unit, ctx.unit.source
        tainted: dict[str, str] = {}
        defs: list[tuple[str, Node, Node]] = []  # (variable, value, where)
        for d in _function_declarations(unit, fn):
            if d.init is not None:
                defs.append((d.name, d.init, d.init))
        for node in _in(_nodes(unit, "assignment_expression"), fn.body_start, fn.body_end):
            left, right = node.child_by_field_id(F_LEFT), node.child_by_field_id(F_RIGHT)
            if left is not None and right is not None and _unwrap(left).type == "identifier":
                defs.append((_text(src, _unwrap(left)), right, node))
        for lp in fn.loops:  # a loop variable stepping from a thread-dependent start
            if lp.var and lp.init and "threadIdx" in lp.init:
                tainted.setdefault(lp.var, f"{lp.var} = {lp.init}")
        # what ``_depends`` reads of each value, found once: whether its text names the
        # thread, else the identifiers it reads (the passes then only look them up)
        reads: list[tuple[bool, list[str]] | None] = [None] * len(defs)
        changed = True
        while changed:
            changed = False
            for i, (name, value, node) in enumerate(defs):
                if name in tainted:
                    continue
                seen = reads[i]
                if seen is None:
                    text = _text(src, value)
                    direct = "threadIdx" in text or any(c in text for c in _THREAD_CALLS)
                    seen = reads[i] = (direct, [] if direct else
                                       [n for n, _ in _identifiers(value, src)])
                if seen[0] or any(n in tainted for n in seen[1]):
                    tainted[name] = _snippet(_text(src, node))
                    changed = True
        return tainted

    return _memo(ctx.unit, f"tainted:{fn.start}", build)


_THREAD_CALLS = ("thread_rank", "__lane_id", "laneid", "threadIdx", "__shfl")


def _depends(node: Node, src: bytes, tainted: Mapping[str, str]) -> bool:
    text = _text(src, node)
    if "threadIdx" in text or any(c in text for c in _THREAD_CALLS):
        return True
    return any(name in tainted for name, _ in _identifiers(node, src))


_BLOCK_BARRIER = re.compile(r"^(?:__syncthreads\w*|__barrier_sync|.*\bblock\w*\.sync|"
                            r".*this_thread_block\(\)\.sync|.*grid\w*\.sync)$")


def _condition_of(parent: Node, child: Node) -> Node | None:
    """The condition controlling whether ``child`` runs, if ``parent`` is a branch or loop
    and ``child`` is not that condition itself."""
    t = parent.type
    if t in ("if_statement", "while_statement", "do_statement", "switch_statement",
             "for_statement"):
        cond = parent.child_by_field_id(F_CONDITION)
        if cond is None or cond.start_byte <= child.start_byte < cond.end_byte:
            return None
        if cond.type == "condition_clause":
            cond = cond.child_by_field_id(F_VALUE) or cond
        return _unwrap(cond)
    if t == "conditional_expression":
        cond = parent.child_by_field_id(F_CONDITION)
        return None if cond is not None and cond == child else cond
    if t == "binary_expression" and _operator(parent) in ("&&", "||"):
        left = parent.child_by_field_id(F_LEFT)
        return left if left is not None and left != child else None
    return None


def _thread_condition_above(node: Node, stop: Node, src: bytes,
                            tainted: Mapping[str, str]) -> Node | None:
    cur = node
    while cur.parent is not None and cur.parent != stop:
        cond = _condition_of(cur.parent, cur)
        if cond is not None and _depends(cond, src, tainted):
            return cond
        cur = cur.parent
    return None


def _taint_words(cond: Node, src: bytes, tainted: Mapping[str, str]) -> str:
    for name, _ in _identifiers(cond, src):
        if name in tainted:
            return f" (`{tainted[name]}`)"
    return ""


SMEM_DEFAULT = 48 * 1024
SMEM_OPTIN = 227 * 1024


def _shared_bytes(decls: list[Any], ev: _Eval) -> tuple[int | None, str]:
    """Static shared bytes of ``__shared__`` declarations (extern ones are dynamic)."""
    total = 0
    for s in decls:
        if s.extern:
            continue
        size = SIZES.get(_norm_type(s.type))
        if size is None:
            return None, f"the size of {s.type} (`__shared__ {s.type} {s.name}`) is unknown"
        for dim in s.dims:
            v = ev.text(dim)
            if not isinstance(v, int):
                return None, f"the dimension [{dim}] of `{s.name}` has no known value: {ev.why}"
            size *= v
        total += size
    return total, ""


def _spec_elements(ctx: Place, name: str) -> tuple[int | None, str]:
    """(the most elements the spec ever allocates for buffer argument ``name``, how known)."""
    spec = _spec_for(ctx)
    inner = _kernel_spec(spec)
    if spec is None or inner is None:
        return None, "no spec"
    arg = next((a for a in inner.args if a.name == name), None)
    if arg is None or arg.shape is None:
        return None, f"the spec gives no buffer `{name}`"
    sizes = dict(inner.sizes)
    verify = tuple(inner.verify_sizes)
    words = set(re.findall(r"[A-Za-z_]\w*", " ".join(arg.shape)))
    if not verify and words & set(sizes):  # the gate derives sizes: nothing may be assumed
        return None, (f"the shape [{', '.join(arg.shape)}] of `{name}` depends on sizes the "
                      "spec does not fix (no verify_sizes)")
    try:
        counts = [element_count(arg.shape, spec.env(s)) for s in (sizes, *verify)]
    except Exception as e:  # an expression the spec cannot evaluate here: not known
        return None, f"the shape [{', '.join(arg.shape)}] of `{name}` has no value ({e})"
    return max(counts), f"the spec allocates `{name}` with shape [{', '.join(arg.shape)}]"
