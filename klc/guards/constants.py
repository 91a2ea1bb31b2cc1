"""Guard predicates about constants: known values, comparisons, divisibility, powers of
two (``klc.analysis.constants`` folds the expressions)."""

from __future__ import annotations

from typing import Any

from klc.analysis.alignment import _multiple_of
from klc.analysis.constants import (
    COMPARISONS,
    _constant,
    _describe_arg,
    _from,
    _number_arg,
    _spec_for,
    _spec_sizes,
)
from klc.analysis.tree import _binding_node, _code, _text, _unwrap
from klc.guards.registry import (
    _VALUE,
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


@predicate("is_constant", _metavar("$E"), reads=("arguments", "declarations", "spec"))
def is_constant(ctx: GuardContext, e: Binding) -> Verdict:
    """$E is a compile-time constant: literals, #defines, const/constexpr variables,
    template arguments the spec gives, folded with C's arithmetic."""
    v, why, definite, sources = _constant(ctx, e)
    if v is not None:
        return _yes(f"{_code(e)} = {v}{_from(sources)}", e.start)
    if definite:
        return _no(ctx, f"{_code(e)} is not a compile-time constant: {why} "
                   f"({ctx.unit.where(e.start)})", e.start)
    return _unknown(ctx, f"{_code(e)} has no known value: {why} ({ctx.unit.where(e.start)})",
                    e.start)


@predicate("const_value", _metavar("$E"), ArgSpec("op", frozenset({"op", "string"})),
           ArgSpec("N", frozenset({"int", "float", "hole", "metavar"})),
           reads=("arguments", "declarations", "spec"))
def const_value(ctx: GuardContext, e: Binding, op: str, n: Any) -> Verdict:
    """The value of $E, known statically (a constant, or a size the spec fixes), compares
    with N: ``const_value($K, >=, 4)``."""
    if op not in COMPARISONS:
        return _no(ctx, f"const_value: unknown comparison {op!r}")
    rhs = _number_arg(ctx, n)
    if rhs is None:
        return _unknown(ctx, f"const_value: {_describe_arg(n)} has no known value")
    v, why, definite, sources = _constant(ctx, e, runtime=True)
    if v is None:
        verdict = _no if definite else _unknown
        return verdict(ctx, f"{_code(e)} has no known value: {why} "
                       f"({ctx.unit.where(e.start)})", e.start)
    if COMPARISONS[op](v, rhs):
        return _yes(f"{_code(e)} = {v} {op} {rhs}{_from(sources)}", e.start)
    return _no(ctx, f"{_code(e)} = {v}{_from(sources)} ({ctx.unit.where(e.start)}), "
               f"and not {v} {op} {rhs}", e.start)


@predicate("equals", _metavar("$E"), ArgSpec("N", frozenset({"int", "float", "hole",
                                                             "metavar"})),
           reads=("arguments", "declarations", "spec"))
def equals(ctx: GuardContext, e: Binding, n: Any) -> Verdict:
    """$E is known to equal N (shorthand for ``const_value($E, ==, N)``)."""
    return const_value(ctx, e, "==", n)


@predicate("divisible", _metavar("$E"), ArgSpec("N", _VALUE),
           reads=("arguments", "declarations", "spec"))
def divisible(ctx: GuardContext, e: Binding, n: Any) -> Verdict:
    """$E is known to be a multiple of N: a constant, a #define, or a size the spec fixes
    (every profiling and verification size, or none counts)."""
    d = _number_arg(ctx, n)
    if not isinstance(d, int) or d == 0:
        return _unknown(ctx, f"divisible: the divisor {_describe_arg(n)} is not a known "
                        "non-zero integer")
    node = _binding_node(e)
    if node is not None and _unwrap(node).type == "identifier":
        sizes = _spec_sizes(ctx, _text(ctx.unit.source, _unwrap(node)))
        if sizes is not None:
            bad = [s for s in sizes if s % d]
            if bad:
                return _no(ctx, f"{_code(e)} takes the value {bad[0]} in the spec, not a "
                           f"multiple of {d}", e.start)
            return _yes(f"every spec size of {_code(e)} ({', '.join(map(str, sizes))}) is a "
                        f"multiple of {d}", e.start)
    v, why, definite, sources = _constant(ctx, e)
    if v is None and node is not None:
        # not one value, but maybe always a multiple: products, sums and shifts of
        # constants, spec sizes, locals set once and counted loop variables
        m, how = _multiple_of(ctx, node)
        if m == 0 or (m > 1 and m % d == 0):
            return _yes(f"{_code(e)} is a multiple of {m or d}: {how}", e.start)
    if v is None:
        extra = "" if _spec_for(ctx) is None else (
            "; the spec does not fix it for every verification size")
        verdict = _no if definite else _unknown
        return verdict(ctx, f"{_code(e)} is not known to be a multiple of {d}: {why}{extra} "
                       f"({ctx.unit.where(e.start)})", e.start)
    if isinstance(v, int) and v % d == 0:
        return _yes(f"{_code(e)} = {v} is a multiple of {d}{_from(sources)}", e.start)
    return _no(ctx, f"{_code(e)} = {v}{_from(sources)} is not a multiple of {d} "
               f"({ctx.unit.where(e.start)})", e.start)


@predicate("power_of_two", _metavar("$E"), reads=("arguments", "declarations", "spec"))
def power_of_two(ctx: GuardContext, e: Binding) -> Verdict:
    """$E is a known constant power of two (1, 2, 4, ...)."""
    v, why, definite, sources = _constant(ctx, e)
    if v is None:
        verdict = _no if definite else _unknown
        return verdict(ctx, f"{_code(e)} has no known value: {why} "
                       f"({ctx.unit.where(e.start)})", e.start)
    if isinstance(v, int) and v > 0 and v & (v - 1) == 0:
        return _yes(f"{_code(e)} = {v} is a power of two{_from(sources)}", e.start)
    return _no(ctx, f"{_code(e)} = {v}{_from(sources)} is not a power of two "
               f"({ctx.unit.where(e.start)})", e.start)
