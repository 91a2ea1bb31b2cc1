"""Launch dimensions, threads and shared memory (``klc.analysis`` layer 5, over constants).

``block_dims``: the block's exact extent (the spec's ``block``, or every launch in the file
agreeing) or an upper bound (``__launch_bounds__``). ``thread_dependent``: which variables
may differ between the threads of a block (a taint analysis to a fixpoint). Shared memory a
kernel declares, and the elements the spec allocates for a buffer."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tree_sitter import Node

from klc.analysis.constants import Evaluator, kernel_spec, spec_for
from klc.analysis.declarations import function_declarations
from klc.analysis.tree import (
    Place,
    cast_target,
    in_span,
    names_in,
    nodes_of,
    operator_of,
    snippet,
    text_of,
    unit_memo,
    unparen,
)
from klc.analysis.types import SIZES, norm_type
from klc.cuda.syntax import F_ARGUMENT, F_CONDITION, F_FIELD, F_LEFT, F_RIGHT, F_VALUE
from klc.spec import element_count

if TYPE_CHECKING:
    from klc.cuda.model import Function


def field_of(node: Node, src: bytes, base: str, axis: str = "x") -> bool:
    node = strip_casts(node, src)
    if node.type != "field_expression":
        return False
    arg, fld = node.child_by_field_id(F_ARGUMENT), node.child_by_field_id(F_FIELD)
    return arg is not None and fld is not None and text_of(src, arg) == base \
        and text_of(src, fld) == axis


def strip_casts(node: Node, src: bytes) -> Node:
    while True:
        node = unparen(node)
        _, operand = cast_target(node, src)
        if operand is None:
            return node
        node = operand


def index_factors(node: Node, src: bytes, axis: str | None = None) -> list[tuple[Node, Node]]:
    """For ``blockIdx.a * F + threadIdx.a`` (terms and factors in either order, casts and
    parentheses aside; ``axis`` None: threadIdx's field not checked), the (factor, other
    factor) pairs of its product, each of which may be the ``blockIdx`` side: the callers
    ask which is ``blockIdx.a`` and what the step is. Empty for any other shape."""
    node = strip_casts(node, src)
    if node.type != "binary_expression" or operator_of(node) != "+":
        return []
    left = strip_casts(node.child_by_field_id(F_LEFT), src)
    right = strip_casts(node.child_by_field_id(F_RIGHT), src)
    out = []
    for prod, tid in ((left, right), (right, left)):
        if not field_of(tid, src, "threadIdx", *((axis,) if axis else ())) \
                or prod.type != "binary_expression" or operator_of(prod) != "*":
            continue
        a = strip_casts(prod.child_by_field_id(F_LEFT), src)
        b = strip_casts(prod.child_by_field_id(F_RIGHT), src)
        out += [(a, b), (b, a)]
    return out


def is_linear_index(node: Node, src: bytes, axis: str | None = None) -> bool:
    """``blockIdx.a * blockDim.a + threadIdx.a`` in any order of its terms and factors."""
    args = (axis,) if axis else ()
    return any(field_of(bid, src, "blockIdx", *args) and field_of(dim, src, "blockDim", *args)
               for bid, dim in index_factors(node, src, axis))


def thread_dependent(ctx: Place, fn: Function) -> dict[str, str]:
    """Variables of ``fn`` whose value may differ between threads of a block, each with the
    assignment that makes it so (a taint analysis to a fixpoint over the function)."""

    def build() -> dict[str, str]:
        unit, src = ctx.unit, ctx.unit.source
        tainted: dict[str, str] = {}
        defs: list[tuple[str, Node, Node]] = []  # (variable, value, where)
        for d in function_declarations(unit, fn):
            if d.init is not None:
                defs.append((d.name, d.init, d.init))
        for node in in_span(nodes_of(unit, "assignment_expression"), fn.body_start, fn.body_end):
            left, right = node.child_by_field_id(F_LEFT), node.child_by_field_id(F_RIGHT)
            if left is not None and right is not None and unparen(left).type == "identifier":
                defs.append((text_of(src, unparen(left)), right, node))
        for lp in fn.loops:  # a loop variable stepping from a thread-dependent start
            if lp.var and lp.init and "threadIdx" in lp.init:
                tainted.setdefault(lp.var, f"{lp.var} = {lp.init}")
        # what ``taints`` reads of each value, found once: whether its text names the
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
                    text = text_of(src, value)
                    direct = "threadIdx" in text or any(c in text for c in _THREAD_CALLS)
                    seen = reads[i] = (direct, [] if direct else
                                       [n for n, _ in names_in(value, src)])
                if seen[0] or any(n in tainted for n in seen[1]):
                    tainted[name] = snippet(text_of(src, node))
                    changed = True
        return tainted

    return unit_memo(ctx.unit, f"tainted:{fn.start}", build)


_THREAD_CALLS = ("thread_rank", "__lane_id", "laneid", "threadIdx", "__shfl")


def taints(node: Node, src: bytes, tainted: Mapping[str, str]) -> bool:
    text = text_of(src, node)
    if "threadIdx" in text or any(c in text for c in _THREAD_CALLS):
        return True
    return any(name in tainted for name, _ in names_in(node, src))


BLOCK_BARRIER = re.compile(r"^(?:__syncthreads\w*|__barrier_sync|.*\bblock\w*\.sync|"
                           r".*this_thread_block\(\)\.sync|.*grid\w*\.sync)$")


def condition_of(parent: Node, child: Node) -> Node | None:
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
        return unparen(cond)
    if t == "conditional_expression":
        cond = parent.child_by_field_id(F_CONDITION)
        return None if cond is not None and cond == child else cond
    if t == "binary_expression" and operator_of(parent) in ("&&", "||"):
        left = parent.child_by_field_id(F_LEFT)
        return left if left is not None and left != child else None
    return None


def thread_condition_above(node: Node, stop: Node, src: bytes,
                           tainted: Mapping[str, str]) -> Node | None:
    cur = node
    while cur.parent is not None and cur.parent != stop:
        cond = condition_of(cur.parent, cur)
        if cond is not None and taints(cond, src, tainted):
            return cond
        cur = cur.parent
    return None


def taint_words(cond: Node, src: bytes, tainted: Mapping[str, str]) -> str:
    for name, _ in names_in(cond, src):
        if name in tainted:
            return f" (`{tainted[name]}`)"
    return ""


SMEM_DEFAULT = 48 * 1024
SMEM_OPTIN = 227 * 1024


def shared_bytes(decls: list[Any], ev: Evaluator) -> tuple[int | None, str]:
    """Static shared bytes of ``__shared__`` declarations (extern ones are dynamic)."""
    total = 0
    for s in decls:
        if s.extern:
            continue
        size = SIZES.get(norm_type(s.type))
        if size is None:
            return None, f"the size of {s.type} (`__shared__ {s.type} {s.name}`) is unknown"
        for dim in s.dims:
            v = ev.text(dim)
            if not isinstance(v, int):
                return None, f"the dimension [{dim}] of `{s.name}` has no known value: {ev.why}"
            size *= v
        total += size
    return total, ""


def spec_elements(ctx: Place, name: str) -> tuple[int | None, str]:
    """(the most elements the spec ever allocates for buffer argument ``name``, how known)."""
    spec = spec_for(ctx)
    inner = kernel_spec(spec)
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
