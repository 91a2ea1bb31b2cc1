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


# the bytes of the scalar element types a 128-bit copy moves bit for bit (names as
# ``norm_type`` spells them); a type not here (a struct, a typedef clang does not resolve to
# one of these) has no known size and refuses
_SCALAR_BYTES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "int8_t": 1, "uint8_t": 1,
    "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "__half": 2,
    "__nv_bfloat16": 2,
    "float": 4, "int": 4, "unsigned int": 4, "int32_t": 4, "uint32_t": 4,
    "double": 8, "long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8,
    "int64_t": 8, "uint64_t": 8, "size_t": 8,
}


@predicate("vector_elems", _metavar(), ArgSpec("W", frozenset({"int", "hole"})),
           ArgSpec("BYTES", frozenset({"int"})), reads=("declarations", "layout"),
           per_declaration=True)
def vector_elems(ctx: GuardContext, x: Binding, w: object, nbytes: object) -> Verdict:
    """W elements of the element type of $X make BYTES bytes: ``vector_elems($SRC, ?w, 16)``
    is 4 for float or int, 8 for __half, 16 for unsigned char, so that one 128-bit access
    (a ``uint4``) moves W consecutive elements bit for bit. The type's size comes from its
    declaration (or clang, through a typedef); a type of unknown size refuses."""
    node = binding_node(x)
    typ = type_of(ctx, node) if node is not None else None
    if typ is not None:
        have, how = norm_type(typ.base), typ.how
    else:
        fact, why = type_fact(ctx, x)
        if fact is None:
            return _unknown(ctx, f"the type of {quoted(x)} ({ctx.unit.where(x.start)}): {why}",
                            x.start)
        have, how = norm_type(fact.element_type), "clang"
    size = _SCALAR_BYTES.get(have)
    if size is None:
        return _no(ctx, f"the element type of {quoted(x)} is {have} ({how}): not a scalar of "
                   "known size", x.start)
    if not isinstance(w, int) or not isinstance(nbytes, int) or isinstance(w, bool):
        return _no(ctx, f"vector_elems: {w!r} or {nbytes!r} is not an integer", x.start)
    if size * w == nbytes:
        return _yes(f"{w} elements of {quoted(x)} ({have}, {size} bytes) make {nbytes} bytes",
                    x.start)
    return _no(ctx, f"{w} elements of {quoted(x)} ({have}, {size} bytes) are {size * w} "
               f"bytes, not {nbytes}", x.start)


def element_bytes(ctx: GuardContext, x: Binding) -> int | None:
    """The size of $X's element type where the tree says it (klc.guards.geometry)."""
    node = binding_node(x)
    typ = type_of(ctx, node) if node is not None else None
    return _SCALAR_BYTES.get(norm_type(typ.base)) if typ is not None else None


# the one-byte integer types whose values a uchar4 store writes bit for bit once converted to
# unsigned char (modulo 256, as the conversion to the type itself wraps); bool is not one of
# them: it keeps 0 or 1 where unsigned char keeps the value modulo 256
_BYTE_INTEGERS = frozenset({"char", "signed char", "unsigned char", "int8_t", "uint8_t"})


@predicate("byte_integer", _metavar(), reads=("declarations", "layout"), per_declaration=True)
def byte_integer(ctx: GuardContext, x: Binding) -> Verdict:
    """The element type of the pointer or array $X is a one-byte integer: ``char``, ``signed
    char``, ``unsigned char``, ``int8_t``, ``uint8_t``, or a typedef clang resolves to one
    (``typedef unsigned char uchar;``). A value converted to it and a value converted to
    ``unsigned char`` have the same bits, so four of them leave memory as one ``uchar4``
    (``make_uchar4``); ``bool`` (whose conversion keeps 0 or 1) and wider types are not."""
    node = binding_node(x)
    typ = type_of(ctx, node) if node is not None else None
    if typ is not None and norm_type(typ.base) in _BYTE_INTEGERS:
        return _yes(f"{quoted(x)} has the one-byte integer element type {typ.base}", x.start)
    fact, why = type_fact(ctx, x)
    if fact is None:
        if typ is not None:
            return _no(ctx, f"the element type of {quoted(x)} is {typ.base} ({typ.how}): not a "
                       "one-byte integer", x.start)
        return _unknown(ctx, f"the type of {quoted(x)} ({ctx.unit.where(x.start)}): {why}",
                        x.start)
    t = fact.pointee if fact.pointee is not None else fact
    canonical = norm_type(" ".join(t.canonical.replace("const", " ").replace("volatile", " ")
                                    .split()))
    if canonical in _BYTE_INTEGERS:
        return _yes(f"{quoted(x)} has element type {fact.element_type} = {canonical}, a "
                    "one-byte integer (clang)", x.start)
    return _no(ctx, f"the element type of {quoted(x)} is {fact.element_type} ({canonical}, "
               f"clang, {ctx.unit.where(x.start)}): not a one-byte integer", x.start)
