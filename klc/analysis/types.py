"""Types of expressions (``klc.analysis`` layer 3, over declarations).

From the tree first (declarations, literals, subscripts, casts, vector components); libclang
only where the tree cannot tell (``type_fact``, through ``unit.facts``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tree_sitter import Node

from klc.analysis.declarations import _base_type, _Decl, lookup
from klc.analysis.tree import (
    Place,
    binding_node,
    cast_target,
    cited,
    clang_facts,
    operator_of,
    text_of,
    unparen,
)
from klc.cuda.syntax import F_ARGUMENT, F_FIELD

if TYPE_CHECKING:
    from klc.match.model import Binding


_VECTOR_COMPONENT = {"float": "float", "double": "double", "int": "int", "uint": "unsigned int",
                     "half": "__half", "__half": "__half", "char": "char", "uchar":
                     "unsigned char", "short": "short", "longlong": "long long"}
SIZES: dict[str, int] = {
    "char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "int8_t": 1, "uint8_t": 1,
    "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2,
    "__nv_bfloat16": 2, "nv_bfloat16": 2, "int": 4, "unsigned": 4, "unsigned int": 4,
    "int32_t": 4, "uint32_t": 4, "float": 4, "long": 8, "unsigned long": 8, "long long": 8,
    "unsigned long long": 8, "int64_t": 8, "uint64_t": 8, "size_t": 8, "double": 8,
    "half2": 4, "__half2": 4, "__nv_bfloat162": 4, "char2": 2, "uchar2": 2, "char4": 4,
    "uchar4": 4, "short2": 4, "ushort2": 4, "short4": 8, "float2": 8, "float3": 12,
    "float4": 16, "int2": 8, "int3": 12, "int4": 16, "uint2": 8, "uint3": 12, "uint4": 16,
    "double2": 16, "longlong2": 16, "ulonglong2": 16,
}
# natural alignment where it differs from the size (three-component vectors)
ALIGNS: dict[str, int] = {"float3": 4, "int3": 4, "uint3": 4}
_TYPE_ALIASES = {"unsigned": "unsigned int", "half": "__half", "half2": "__half2",
                 "nv_bfloat16": "__nv_bfloat16", "signed int": "int", "signed": "int",
                 "long int": "long", "long long int": "long long",
                 "unsigned long long int": "unsigned long long"}


def norm_type(t: str) -> str:
    t = _base_type(t)
    return _TYPE_ALIASES.get(t, t)


@dataclass(frozen=True)
class _Type:
    base: str
    pointer: int
    decl: _Decl | None  # where the type came from, when it is a declared variable
    how: str  # for reasons: "declared `const float* x` (k.cu:1:20)"


def type_of(ctx: Place, node: Node) -> _Type | None:
    """The type of an expression from the tree alone, or None when only clang would know."""
    unit, src = ctx.unit, ctx.unit.source
    node = unparen(node)
    t = node.type
    if t == "identifier":
        d = lookup(ctx, text_of(src, node), node.start_byte)
        if d is None:
            return None
        return _Type(d.base, d.pointer, d, f"declared at {cited(unit, d.start, d.end)}")
    if t == "number_literal":
        lit = text_of(src, node).lower()
        is_float = not lit.startswith("0x") and ("." in lit or "e" in lit or lit.endswith("f"))
        base = ("float" if lit.endswith("f") else "double") if is_float else "int"
        return _Type(base, 0, None, f"literal {lit}")
    if t == "subscript_expression":
        inner = type_of(ctx, node.child_by_field_id(F_ARGUMENT))
        if inner is None or inner.pointer == 0:
            return None
        return _Type(inner.base, inner.pointer - 1, inner.decl, inner.how)
    if t == "pointer_expression":
        inner = type_of(ctx, node.child_by_field_id(F_ARGUMENT))
        if inner is None:
            return None
        if operator_of(node) == "&":
            return _Type(inner.base, inner.pointer + 1, inner.decl, inner.how)
        return None if inner.pointer == 0 else _Type(inner.base, inner.pointer - 1, inner.decl,
                                                     inner.how)
    if t == "binary_expression" and operator_of(node) in ("+", "-"):
        for side in ("left", "right"):
            inner = type_of(ctx, node.child_by_field_name(side))
            if inner is not None and inner.pointer > 0:
                return inner
        return None
    if t == "field_expression":
        arg = node.child_by_field_id(F_ARGUMENT)
        fld = node.child_by_field_id(F_FIELD)
        if arg is not None and text_of(src, arg) in ("threadIdx", "blockIdx", "blockDim",
                                                     "gridDim"):
            return _Type("unsigned int", 0, None, "a CUDA built-in index")
        inner = type_of(ctx, arg) if arg is not None else None
        if inner is not None and fld is not None and text_of(src, fld) in "xyzw" \
                and inner.pointer == (1 if operator_of(node) == "->" else 0):
            m = re.fullmatch(r"([a-z_]+?)([1-4])", inner.base)
            if m and m.group(1) in _VECTOR_COMPONENT:
                return _Type(_VECTOR_COMPONENT[m.group(1)], 0, inner.decl, inner.how)
        return None
    ty, _ = cast_target(node, src)
    if ty is not None:
        text = text_of(src, ty)
        return _Type(_base_type(text), text.count("*"), None, f"cast to {' '.join(text.split())}")
    return None


def type_fact(ctx: Place, b: Binding) -> tuple[Any, str]:
    facts, why = clang_facts(ctx)
    if facts is None:
        return None, why
    fact = facts.type_of(b.start, b.end)
    return fact, "" if fact is not None else "clang has no type for it"


def decl_type(ctx: Place, x: Binding) -> tuple[_Type | None, Any, str]:
    """Tree type, else clang's TypeFact, else why neither."""
    node = binding_node(x)
    typ = type_of(ctx, node) if node is not None else None
    if typ is not None:
        return typ, None, ""
    fact, why = type_fact(ctx, x)
    return None, fact, why


INTEGERS = frozenset({
    "char", "signed char", "unsigned char", "bool", "short", "unsigned short", "int",
    "unsigned int", "long", "unsigned long", "long long", "unsigned long long", "size_t",
    "ptrdiff_t", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t",
    "int64_t", "uint64_t", "unsigned short int", "short int", "unsigned long int"})
_INT_OPERATORS = frozenset({"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"})


def _base_of(ctx: Place, node: Node | None, x: Binding | None = None) -> tuple[str, int] | None:
    """(base type, pointer depth) of an expression: the tree, then clang (for a binding's
    span); integer arithmetic of integers is an integer."""
    if node is None:
        return None
    typ = type_of(ctx, node)
    if typ is not None:
        return norm_type(typ.base), typ.pointer
    inner = unparen(node)
    if inner.type == "binary_expression" and operator_of(inner) in _INT_OPERATORS:
        sides = [_base_of(ctx, inner.child_by_field_name(s)) for s in ("left", "right")]
        if all(s is not None and s[1] == 0 and s[0] in INTEGERS for s in sides):
            return "int", 0
    if x is not None:
        fact, _ = type_fact(ctx, x)
        if fact is not None:
            return norm_type(fact.element_type), int(bool(fact.is_pointer))
    return None


def has_type_kind(ctx: Place, x: Binding, kind: str) -> bool:
    """Does $X have the type a ``metavar $X: KIND`` line asks for (``pointer``: a pointer or
    an array; ``scalar``: not one; ``int_expr``: an integer; ``float``, an isomorphism's
    obligation: a float)? From the declarations (then clang); a type that is not known is
    not that kind."""
    found = _base_of(ctx, binding_node(x), x)
    if found is None:
        return False
    base, pointer = found
    if kind == "pointer":
        return pointer > 0
    if kind == "scalar":
        return pointer == 0
    if kind == "int_expr":
        return pointer == 0 and base in INTEGERS
    if kind == "float":
        return pointer == 0 and base == "float"
    return False
