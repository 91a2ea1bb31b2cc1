"""Guard predicates about types: the element type of a pointer or an expression, whether it
is a pointer (and ``has_type_kind`` for ``metavar $X: pointer`` lines)."""

from __future__ import annotations

from klc.analysis.tree import binding_node, quoted
from klc.analysis.types import decl_type, norm_type, type_fact, type_of
from klc.guards.registry import (
    ArgSpec,
    GuardContext,
    Verdict,
    _metavar,
    _no,
    _unknown,
    _yes,
    predicate,
)
from klc.match import Binding


@predicate("elem_type", _metavar(),
           ArgSpec('"type"', frozenset({"string", "name", "hole", "metavar"})),
           reads=("declarations", "layout"), per_declaration=True)
def elem_type(ctx: GuardContext, x: Binding, want: str | Binding) -> Verdict:
    """The element type of a pointer or array $X (or the type of an expression) is TYPE: a
    string, a type hole's value (``elem_type($G, ?t)``) or the type a metavariable bound
    (``elem_type($G, $T)``, ``metavar $T: type``).

    Qualifiers do not count: ``const float* __restrict__`` has element type ``float``."""
    if isinstance(want, Binding):
        want = " ".join(want.text.split())
    want = str(want)
    node = binding_node(x)
    typ = type_of(ctx, node) if node is not None else None
    want_n = norm_type(want)
    if typ is not None:
        have = norm_type(typ.base)
        fn = ctx.function
        if fn is not None and any(t.name == have for t in fn.template_params):
            return _unknown(ctx, f"the element type of {quoted(x)} is the template parameter "
                            f"{have} ({typ.how})", x.start)
        if have == want_n:
            return _yes(f"{quoted(x)} has element type {want}", x.start)
        return _no(ctx, f"the element type of {quoted(x)} is {typ.base}, not {want} ({typ.how})",
                   x.start)
    fact, why = type_fact(ctx, x)
    if fact is None:
        return _unknown(ctx, f"the type of {quoted(x)} ({ctx.unit.where(x.start)}): {why}",
                        x.start)
    have = norm_type(fact.element_type)
    if have == want_n:
        return _yes(f"{quoted(x)} has element type {want} (clang)", x.start)
    return _no(ctx, f"the element type of {quoted(x)} is {fact.element_type}, not {want} "
               f"(clang, {ctx.unit.where(x.start)})", x.start)


@predicate("is_pointer", _metavar(), reads=("declarations", "layout"), per_declaration=True)
def is_pointer(ctx: GuardContext, x: Binding) -> Verdict:
    """$X is a pointer (or an array, which decays to one)."""
    typ, fact, why = decl_type(ctx, x)
    if typ is not None:
        if typ.pointer > 0:
            return _yes(f"{quoted(x)} is a pointer", x.start)
        return _no(ctx, f"{quoted(x)} is not a pointer: its type is {typ.base} ({typ.how})",
                   x.start)
    if fact is None:
        return _unknown(ctx, f"the type of {quoted(x)}: {why}", x.start)
    if fact.is_pointer:
        return _yes(f"{quoted(x)} is a pointer (clang)", x.start)
    return _no(ctx, f"{quoted(x)} is not a pointer: its type is {fact.spelling} "
               f"({ctx.unit.where(x.start)})", x.start)
