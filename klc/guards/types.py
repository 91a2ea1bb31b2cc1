"""Guard predicates about types: the element type of a pointer or an expression, whether it
is a pointer (and ``has_type_kind`` for ``metavar $X: pointer`` lines)."""

from __future__ import annotations

from klc.analysis.tree import _binding_node, _code
from klc.analysis.types import _decl_type, _norm_type, _type_fact, _type_of
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
    node = _binding_node(x)
    typ = _type_of(ctx, node) if node is not None else None
    want_n = _norm_type(want)
    if typ is not None:
        have = _norm_type(typ.base)
        fn = ctx.function
        if fn is not None and any(t.name == have for t in fn.template_params):
            return _unknown(ctx, f"the element type of {_code(x)} is the template parameter "
                            f"{have} ({typ.how})", x.start)
        if have == want_n:
            return _yes(f"{_code(x)} has element type {want}", x.start)
        return _no(ctx, f"the element type of {_code(x)} is {typ.base}, not {want} ({typ.how})",
                   x.start)
    fact, why = _type_fact(ctx, x)
    if fact is None:
        return _unknown(ctx, f"the type of {_code(x)} ({ctx.unit.where(x.start)}): {why}",
                        x.start)
    have = _norm_type(fact.element_type)
    if have == want_n:
        return _yes(f"{_code(x)} has element type {want} (clang)", x.start)
    return _no(ctx, f"the element type of {_code(x)} is {fact.element_type}, not {want} "
               f"(clang, {ctx.unit.where(x.start)})", x.start)


@predicate("is_pointer", _metavar(), reads=("declarations", "layout"), per_declaration=True)
def is_pointer(ctx: GuardContext, x: Binding) -> Verdict:
    """$X is a pointer (or an array, which decays to one)."""
    typ, fact, why = _decl_type(ctx, x)
    if typ is not None:
        if typ.pointer > 0:
            return _yes(f"{_code(x)} is a pointer", x.start)
        return _no(ctx, f"{_code(x)} is not a pointer: its type is {typ.base} ({typ.how})",
                   x.start)
    if fact is None:
        return _unknown(ctx, f"the type of {_code(x)}: {why}", x.start)
    if fact.is_pointer:
        return _yes(f"{_code(x)} is a pointer (clang)", x.start)
    return _no(ctx, f"{_code(x)} is not a pointer: its type is {fact.spelling} "
               f"({ctx.unit.where(x.start)})", x.start)
