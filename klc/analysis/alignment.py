"""Alignment (``klc.analysis`` layer 7, over loops): the known alignment of the address a
pointer expression holds, of ``&a[i][j]``, and what an integer is known to be a multiple of
(constants, spec sizes, locals set once, counted loop variables)."""

from __future__ import annotations

import functools
import math

from tree_sitter import Node

from klc.analysis.constants import Evaluator, spec_sizes
from klc.analysis.declarations import _Decl, lookup
from klc.analysis.loops import _assigned_in_body, _step
from klc.analysis.tree import (
    Place,
    cast_target,
    cited,
    in_span,
    nodes_of,
    operator_of,
    snippet,
    text_of,
    unparen,
)
from klc.analysis.types import ALIGNS, SIZES, norm_type, type_of
from klc.analysis.writes import address_taken, is_assigned
from klc.cuda.model import Function
from klc.cuda.syntax import F_ARGUMENT, F_INDICES, F_INITIALIZER, F_LEFT, F_RIGHT, F_UPDATE

CUDA_MALLOC_ALIGN = 256


def align_of(ctx: Place, node: Node, depth: int = 0) -> tuple[int | None, str]:
    """The known alignment in bytes of the address a pointer expression holds, and how it
    is known (or why not)."""
    unit, src = ctx.unit, ctx.unit.source
    node = unparen(node)
    if depth > 8:
        return None, "the pointer is defined through too many copies"
    _, operand = cast_target(node, src)
    if operand is not None:
        return align_of(ctx, operand, depth + 1)
    if node.type == "identifier":
        name = text_of(src, node)
        decl = lookup(ctx, name, node.start_byte)
        if decl is None:
            return None, f"`{name}` is not declared in this file"
        cite = cited(unit, decl.start, decl.end)
        if decl.align is not None:
            return decl.align, f"__align__({decl.align}) ({cite})"
        if decl.origin == "parameter":
            fn = ctx.function
            if fn is None or not fn.is_kernel or decl.pointer == 0:
                return None, f"`{name}` is not a pointer parameter of a kernel ({cite})"
            if is_assigned(ctx, name, fn.body_start, fn.body_end):
                return None, f"parameter `{name}` is reassigned in the kernel ({cite})"
            return CUDA_MALLOC_ALIGN, (f"kernel parameter `{name}`, a device allocation "
                                       f"at offset 0 ({cite})")
        if "__shared__" in decl.qualifiers or decl.origin == "global":
            natural = ALIGNS.get(decl.base, SIZES.get(norm_type(decl.base)))
            if natural:
                return natural, f"the natural alignment of {decl.base} ({cite})"
            return None, f"the alignment of {decl.base} is unknown ({cite})"
        if decl.init is not None and (decl.pointer > 0 or (decl.base == "auto"
                                                            and not decl.reference)):
            a, how = align_of(ctx, decl.init, depth + 1)  # (an auto value: no alignment)
            if a is None:
                return a, how
            if is_assigned(ctx, name, decl.end, ctx.function.body_end if ctx.function else
                           decl.end):
                return _advanced(ctx, name, decl, a, f"{how}, copied into `{name}` ({cite})",
                                 depth)
            return a, f"{how}, copied into `{name}` ({cite})"
        return None, f"`{name}` is declared without a known alignment ({cite})"
    if node.type == "binary_expression" and operator_of(node) in ("+", "-"):
        left, right = node.child_by_field_id(F_LEFT), node.child_by_field_id(F_RIGHT)
        for base, off in ((left, right), (right, left)):
            typ = type_of(ctx, base)
            if typ is None or typ.pointer == 0:
                continue
            a, how = align_of(ctx, base, depth + 1)
            if a is None:
                return None, how
            elem = SIZES.get(norm_type(typ.base)) if typ.pointer == 1 else 8
            ev = Evaluator(ctx)
            k = ev.node(off, src)
            if elem is not None and not isinstance(k, int):
                m, why = multiple_of(ctx, off)  # x + (size_t)row * cols, cols a multiple of 4
                if m == 0:  # 0 * n: no offset at all
                    return a, f"{how}, offset by `{snippet(text_of(src, off))}`, which is 0 ({why})"
                if m > 1:
                    offset = snippet(text_of(src, off))
                    return math.gcd(a, m * elem), (f"{how}, offset by `{offset}`, a multiple of "
                                                   f"{m} × {elem} bytes ({why})")
                if why:
                    return None, (f"the offset `{snippet(text_of(src, off))}` of "
                                  f"`{snippet(text_of(src, node))}` is neither a known constant "
                                  f"nor a known multiple of more than one element ({why})")
            if elem is None or not isinstance(k, int):
                return None, (f"the offset `{snippet(text_of(src, off))}` of "
                              f"`{snippet(text_of(src, node))}` is not a known constant")
            return math.gcd(a, abs(k) * elem) or a, (f"{how}, offset by {k} × {elem} bytes")
        return None, f"`{snippet(text_of(src, node))}` is not pointer arithmetic the tree knows"
    if node.type == "pointer_expression" and operator_of(node) == "&":
        inner = unparen(node.child_by_field_id(F_ARGUMENT))
        if inner.type == "subscript_expression":
            base = inner.child_by_field_id(F_ARGUMENT)
            idx = inner.child_by_field_id(F_INDICES)
            idx_node = idx.named_children[0] if idx is not None and idx.named_children else idx
            typ = type_of(ctx, base)
            a, how = align_of(ctx, base, depth + 1)
            k = Evaluator(ctx).node(idx_node, src) if idx_node is not None else None
            if a is not None and idx_node is not None and not isinstance(k, int):
                return element_alignment(ctx, base, idx_node)  # &in[row * n]: a row
            if a is None or typ is None or not isinstance(k, int):
                return None, how if a is None else "the index is not a known constant"
            elem = SIZES.get(norm_type(typ.base), 0)
            return math.gcd(a, abs(k) * elem) or a, f"{how}, element {k}"
    return None, f"`{snippet(text_of(src, node))}` has no alignment the tree knows"


def _advanced(ctx: Place, name: str, decl: _Decl, a: int, how: str, depth: int
              ) -> tuple[int | None, str]:
    """The alignment of a local pointer that starts ``a``-byte aligned and is advanced
    after its declaration (``x += row * cols``, ``p++``, ``p = q + 4``): ``a`` kept down to
    what every step is known to keep (a multiple of elements, or the alignment of what is
    assigned); None, and why, at the first step that keeps nothing known."""
    fn = ctx.function
    unit, src = ctx.unit, ctx.unit.source
    if fn is None or address_taken(src, name, decl.end, fn.body_end):
        cite = cited(unit, decl.start, decl.end)
        return None, f"`{name}` is reassigned after its declaration ({cite})"
    elem = SIZES.get(norm_type(decl.base)) if decl.pointer == 1 else None
    for node in in_span(nodes_of(unit, "assignment_expression", "update_expression"), decl.end,
                        fn.body_end):
        target = unparen(node.child_by_field_id(F_LEFT if node.type == "assignment_expression"
                                                else F_ARGUMENT))
        if target.type != "identifier" or text_of(src, target) != name:
            continue
        where = f"`{snippet(text_of(src, node))}` ({unit.where(node.start_byte)})"
        op = operator_of(node) if node.type == "assignment_expression" else "++"
        if op == "=":
            b, why = align_of(ctx, node.child_by_field_id(F_RIGHT), depth + 1)
            if b is None:
                return None, f"{where} assigns `{name}` an address of unknown alignment: {why}"
            a = math.gcd(a, b)
            continue
        if elem is None:
            return None, f"{where} moves `{name}`, whose element size is unknown"
        if op in ("+=", "-="):
            m, _ = multiple_of(ctx, node.child_by_field_id(F_RIGHT))
        elif op == "++":
            m = 1
        else:
            return None, f"{where} changes `{name}` in a way the tree does not follow"
        if m != 0:
            a = math.gcd(a, m * elem)
    return a, f"{how}, advanced by known multiples of {a} bytes"


def multiple_of(ctx: Place, node: Node, depth: int = 0) -> tuple[int, str]:
    """A number the integer expression is known to be a multiple of (1: nothing known; 0:
    it is 0), and why: constants, kernel size parameters the spec fixes (every profiling and
    verification size, as ``divisible`` reads them), and their products, sums and shifts."""
    src = ctx.unit.source
    node = unparen(node)
    k = Evaluator(ctx).node(node, src)
    if isinstance(k, int):
        return abs(k), f"`{snippet(text_of(src, node))}` = {k}"
    if depth > 8:
        return 1, ""
    _, operand = cast_target(node, src)
    if operand is not None:
        return multiple_of(ctx, operand, depth + 1)
    if node.type == "identifier":
        name = text_of(src, node)
        decl, fn = lookup(ctx, name, node.start_byte), ctx.function
        if decl is not None and fn is not None and decl.origin == "local" \
                and decl.pointer == 0 and decl.init is not None:
            return _local_multiple(ctx, name, decl, fn, depth)
        sizes = spec_sizes(ctx, name)
        if sizes is None or decl is None or decl.origin != "parameter" or fn is None \
                or is_assigned(ctx, name, fn.body_start, fn.body_end):
            return 1, ""
        g = functools.reduce(math.gcd, sizes)
        return g, f"the spec gives `{name}` the sizes {', '.join(map(str, sizes))}: " \
                  f"multiples of {g}"
    if node.type == "binary_expression" and operator_of(node) in ("*", "+", "-", "<<"):
        left, right = node.child_by_field_id(F_LEFT), node.child_by_field_id(F_RIGHT)
        (a, why_a), (b, why_b) = (multiple_of(ctx, left, depth + 1),
                                  multiple_of(ctx, right, depth + 1))
        why = "; ".join(w for w in (why_a, why_b) if w)
        if operator_of(node) == "*":
            return a * b, why
        if operator_of(node) == "<<":
            shift = Evaluator(ctx).node(right, src)
            return (a << shift, why_a) if isinstance(shift, int) and 0 <= shift < 32 else (1, "")
        return math.gcd(a, b), why
    return 1, ""


def _local_multiple(ctx: Place, name: str, decl: _Decl, fn: Function, depth: int
                    ) -> tuple[int, str]:
    """What a local integer is known to be a multiple of: its initialiser's, when nothing
    assigns it later; a for loop's own variable, its start's and its constant step's."""
    unit, src = ctx.unit, ctx.unit.source
    node: Node | None = unit.root.descendant_for_byte_range(decl.start, decl.end)
    while node is not None and (node.start_byte, node.end_byte) != (decl.start, decl.end):
        node = node.parent
    assert decl.init is not None
    loop = node.parent if node is not None else None
    if loop is not None and loop.type == "for_statement" \
            and loop.child_by_field_id(F_INITIALIZER) == node:
        update = loop.child_by_field_id(F_UPDATE)
        step = _step(update, src, name, Evaluator(ctx)) if update is not None else None
        if step is None or step[0] != "+" or _assigned_in_body(ctx, loop, name):
            return 1, ""
        a, why = multiple_of(ctx, decl.init, depth + 1)
        m = math.gcd(a, abs(step[1]))
        return m, (f"`{name}` starts at `{snippet(text_of(src, decl.init))}` and steps by "
                   f"{step[1]}" + (f" ({why})" if why else ""))
    if is_assigned(ctx, name, decl.end, fn.body_end) or address_taken(src, name, decl.end,
                                                                       fn.body_end):
        return 1, ""
    a, why = multiple_of(ctx, decl.init, depth + 1)
    return a, why


def element_alignment(ctx: Place, array: Node, index: Node) -> tuple[int | None, str]:
    """The known alignment in bytes of ``&array[index]``, where ``array`` may itself be
    subscripted (``As[buf][k]``): the array's own alignment, and each index times the bytes
    one step of it spans (its stride) a known multiple (or zero)."""
    src = ctx.unit.source
    indices = [index]
    base = unparen(array)
    while base.type == "subscript_expression":
        idx = base.child_by_field_id(F_INDICES)
        inner = [c for c in idx.named_children if c.type != "comment"] if idx else []
        if len(inner) != 1:
            return None, f"`{snippet(text_of(src, base))}` is not a plain subscript"
        indices.insert(0, inner[0])
        base = unparen(base.child_by_field_id(F_ARGUMENT))
    if base.type != "identifier":
        return None, f"`{snippet(text_of(src, base))}` is not a named array or pointer"
    name = text_of(src, base)
    decl = lookup(ctx, name, base.start_byte)
    if decl is None:
        return None, f"`{name}` is not declared in this file"
    base_type, levels = decl.base, decl.pointer
    if base_type == "auto" and decl.init is not None and not decl.reference:
        typ = type_of(ctx, decl.init)  # auto r = x + off: a pointer of x's type
        if typ is not None:
            base_type, levels = typ.base, typ.pointer
    elem = SIZES.get(norm_type(base_type))
    if elem is None:
        return None, f"the size of {base_type} is unknown to the tree"
    dims: tuple[str, ...] = decl.dims
    if not dims and not (levels == 1 and len(indices) == 1):
        return None, f"`{name}` is not an array of {len(indices)} dimension(s) or a pointer"
    if dims and len(indices) > len(dims):
        return None, f"`{name}` has {len(dims)} dimension(s), not {len(indices)}"
    a, how = align_of(ctx, base)
    if a is None:
        return None, how
    parts = [how]
    ev = Evaluator(ctx)
    for j, idx in enumerate(indices):
        m, why = multiple_of(ctx, idx)
        if m == 0:
            continue  # index 0: no offset
        stride = elem
        for d in dims[j + 1:]:
            size = ev.text(d) if d else None
            if not isinstance(size, int):
                return None, (f"the stride of index `{snippet(text_of(src, idx))}` of `{name}` "
                              f"is unknown: dimension `{d}`: {ev.why}")
            stride *= size
        a = math.gcd(a, m * stride)
        parts.append(f"`{snippet(text_of(src, idx))}` × {stride} B, a multiple of {m * stride} B"
                     + (f" ({why})" if why and m > 1 else ""))
    return a, "; ".join(parts)
