"""Guard predicates about alignment: of a pointer, of an array element
(``klc.analysis.alignment``)."""

from __future__ import annotations

from typing import Any

from klc.analysis.alignment import align_of, element_alignment
from klc.analysis.constants import number_arg
from klc.analysis.tree import binding_node, clang_facts, quoted, snippet
from klc.analysis.types import ALIGNS, SIZES, norm_type, type_of
from klc.guards.registry import ArgSpec, GuardContext, Verdict, _metavar, _no, _yes, predicate
from klc.match import Binding


@predicate("element_aligned", _metavar("$A"), _metavar("$I"),
           ArgSpec("N", frozenset({"int", "hole"})), reads=("declarations", "layout", "spec"))
def element_aligned(ctx: GuardContext, arr: Binding, i: Binding, n: Any) -> Verdict:
    """The address of element $A[$I] is known N-byte aligned ($A may be subscripted itself:
    As[buf][k]): the array's alignment (__align__, natural, a kernel pointer parameter) and
    every index times its stride a known multiple of N (constants, spec sizes, template
    arguments, locals initialised from them, loop variables with a constant start and
    step)."""
    want = number_arg(ctx, n)
    if not isinstance(want, int) or want <= 0:
        return _no(ctx, f"element_aligned: {n!r} is not a positive integer")
    array, index = binding_node(arr), binding_node(i)
    if array is None or index is None:
        return _no(ctx, f"{quoted(arr)}[{quoted(i)}]: a sequence is not an array element",
                   arr.start)
    what = f"`&{snippet(arr.text)}[{snippet(i.text)}]`"
    a, how = element_alignment(ctx, array, index)
    if a is None:
        return _no(ctx, f"{what} is not known to be {want}-byte aligned: {how}", arr.start)
    if a % want == 0:
        return _yes(f"{what} is {want}-byte aligned: {how}", arr.start)
    return _no(ctx, f"{what} is only known to be {a}-byte aligned, not {want}: {how}",
               arr.start)


@predicate("aligned", _metavar(), ArgSpec("N", frozenset({"int", "hole"})),
           reads=("declarations", "layout", "spec"))
def aligned(ctx: GuardContext, x: Binding, n: Any) -> Verdict:
    """Pointer $X is known aligned to N bytes: __align__, a vector element type (float4),
    a kernel pointer parameter used at offset 0 (cudaMalloc aligns to 256), or offsets from
    one that are constants or known multiples (spec sizes: x + row * cols)."""
    want = number_arg(ctx, n)
    if not isinstance(want, int) or want <= 0:
        return _no(ctx, f"aligned: {n!r} is not a positive integer")
    node = binding_node(x)
    if node is None:
        return _no(ctx, f"{quoted(x)} is a sequence, not a pointer", x.start)
    typ = type_of(ctx, node)
    if typ is not None and typ.pointer > 0:
        natural = ALIGNS.get(typ.base, SIZES.get(norm_type(typ.base), 0))
        if typ.pointer == 1 and natural >= want and natural % want == 0:
            return _yes(f"{quoted(x)} points to {typ.base}, aligned to {natural} bytes", x.start)
    a, how = align_of(ctx, node)
    if a is None:
        facts, _ = clang_facts(ctx) if typ is None else (None, "")
        fact = facts.type_of(x.start, x.end) if facts is not None else None
        pointee = getattr(fact, "pointee", None)
        align = getattr(pointee, "align_bytes", None)
        if align and align >= want and align % want == 0:
            return _yes(f"{quoted(x)} points to {pointee.spelling}, aligned to {align} bytes "
                        "(clang)", x.start)
        return _no(ctx, f"{quoted(x)} is not known to be {want}-byte aligned: {how}", x.start)
    if a % want == 0:
        return _yes(f"{quoted(x)} is {want}-byte aligned: {how}", x.start)
    return _no(ctx, f"{quoted(x)} is only known to be {a}-byte aligned, not {want}: {how}",
               x.start)
