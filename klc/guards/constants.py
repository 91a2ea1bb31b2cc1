"""Guard predicates about constants: known values, comparisons, divisibility, powers of
two (``klc.analysis.constants`` folds the expressions)."""

from __future__ import annotations

import math
import re
from typing import Any

from klc.analysis.alignment import multiple_of
from klc.analysis.constants import (
    COMPARISONS,
    constant_of,
    describe_arg,
    from_note,
    kernel_spec,
    number_arg,
    spec_for,
    spec_sizes,
)
from klc.analysis.declarations import lookup
from klc.analysis.tree import binding_node, quoted, text_of, unparen
from klc.analysis.types import norm_type
from klc.analysis.writes import is_assigned
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
from klc.spec import Bound, default_verify_sizes
from klc.spec.expr import evaluate, launch_dims


@predicate("is_constant", _metavar("$E"), reads=("arguments", "declarations", "spec"))
def is_constant(ctx: GuardContext, e: Binding) -> Verdict:
    """$E is a compile-time constant: literals, #defines, const/constexpr variables,
    template arguments the spec gives, folded with C's arithmetic."""
    v, why, definite, sources = constant_of(ctx, e)
    if v is not None:
        return _yes(f"{quoted(e)} = {v}{from_note(sources)}", e.start)
    if definite:
        return _no(ctx, f"{quoted(e)} is not a compile-time constant: {why} "
                   f"({ctx.unit.where(e.start)})", e.start)
    return _unknown(ctx, f"{quoted(e)} has no known value: {why} ({ctx.unit.where(e.start)})",
                    e.start)


@predicate("const_value", _metavar("$E"), ArgSpec("op", frozenset({"op", "string"})),
           ArgSpec("N", frozenset({"int", "float", "hole", "metavar"})),
           reads=("arguments", "declarations", "spec"))
def const_value(ctx: GuardContext, e: Binding, op: str, n: Any) -> Verdict:
    """The value of $E, known statically (a constant, or a size the spec fixes), compares
    with N: ``const_value($K, >=, 4)``."""
    if op not in COMPARISONS:
        return _no(ctx, f"const_value: unknown comparison {op!r}")
    rhs = number_arg(ctx, n)
    if rhs is None:
        return _unknown(ctx, f"const_value: {describe_arg(n)} has no known value")
    v, why, definite, sources = constant_of(ctx, e, runtime=True)
    if v is None:
        verdict = _no if definite else _unknown
        return verdict(ctx, f"{quoted(e)} has no known value: {why} "
                       f"({ctx.unit.where(e.start)})", e.start)
    if COMPARISONS[op](v, rhs):
        return _yes(f"{quoted(e)} = {v} {op} {rhs}{from_note(sources)}", e.start)
    return _no(ctx, f"{quoted(e)} = {v}{from_note(sources)} ({ctx.unit.where(e.start)}), "
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
    d = number_arg(ctx, n)
    if not isinstance(d, int) or d == 0:
        return _unknown(ctx, f"divisible: the divisor {describe_arg(n)} is not a known "
                        "non-zero integer")
    node = binding_node(e)
    if node is not None and unparen(node).type == "identifier":
        sizes = spec_sizes(ctx, text_of(ctx.unit.source, unparen(node)))
        if sizes is not None:
            bad = [s for s in sizes if s % d]
            if bad:
                return _no(ctx, f"{quoted(e)} takes the value {bad[0]} in the spec, not a "
                           f"multiple of {d}", e.start)
            return _yes(f"every spec size of {quoted(e)} ({', '.join(map(str, sizes))}) is a "
                        f"multiple of {d}", e.start)
    v, why, definite, sources = constant_of(ctx, e)
    if v is None and node is not None:
        # not one value, but maybe always a multiple: products, sums and shifts of
        # constants, spec sizes, locals set once and counted loop variables
        m, how = multiple_of(ctx, node)
        if m == 0 or (m > 1 and m % d == 0):
            return _yes(f"{quoted(e)} is a multiple of {m or d}: {how}", e.start)
    if v is None:
        extra = "" if spec_for(ctx) is None else (
            "; the spec does not fix it for every verification size")
        verdict = _no if definite else _unknown
        return verdict(ctx, f"{quoted(e)} is not known to be a multiple of {d}: {why}{extra} "
                       f"({ctx.unit.where(e.start)})", e.start)
    if isinstance(v, int) and v % d == 0:
        return _yes(f"{quoted(e)} = {v} is a multiple of {d}{from_note(sources)}", e.start)
    return _no(ctx, f"{quoted(e)} = {v}{from_note(sources)} is not a multiple of {d} "
               f"({ctx.unit.where(e.start)})", e.start)


@predicate("power_of_two", _metavar("$E"), reads=("arguments", "declarations", "spec"))
def power_of_two(ctx: GuardContext, e: Binding) -> Verdict:
    """$E is a known constant power of two (1, 2, 4, ...)."""
    v, why, definite, sources = constant_of(ctx, e)
    if v is None:
        verdict = _no if definite else _unknown
        return verdict(ctx, f"{quoted(e)} has no known value: {why} "
                       f"({ctx.unit.where(e.start)})", e.start)
    if isinstance(v, int) and v > 0 and v & (v - 1) == 0:
        return _yes(f"{quoted(e)} = {v} is a power of two{from_note(sources)}", e.start)
    return _no(ctx, f"{quoted(e)} = {v}{from_note(sources)} is not a power of two "
               f"({ctx.unit.where(e.start)})", e.start)


# integer index types: (bytes, signed); an index of another type is no grid-stride index
_INDEX_TYPES = {"int": (4, True), "int32_t": (4, True), "unsigned int": (4, False),
                "uint32_t": (4, False), "long": (8, True), "long long": (8, True),
                "int64_t": (8, True), "ptrdiff_t": (8, True), "unsigned long": (8, False),
                "unsigned long long": (8, False), "uint64_t": (8, False), "size_t": (8, False)}


@predicate("stride_fits", _metavar("$T"), _metavar("$N"),
           reads=("arguments", "declarations", "spec"))
def stride_fits(ctx: GuardContext, t: Binding, n: Binding) -> Verdict:
    """A grid-stride loop ``for (; i < N; i += blockDim.x * gridDim.x)`` over an index of
    type $T never overflows it: $T is a 64-bit integer, or at every size the spec runs, $N
    (kernel parameters by their spec values, locals set once by their initialisers), minus one,
    plus every thread of the spec's launch (the largest stride: the rewrite only shrinks the
    grid) stays within $T. The loop's last step takes the index past N by up to one stride,
    which a 32-bit int near 2^31 would not survive; a one-element-per-thread kernel never
    computes that sum."""
    typ = norm_type(t.text.strip())
    if typ not in _INDEX_TYPES:
        return _no(ctx, f"the index type {quoted(t)} is not a known integer type")
    size, signed = _INDEX_TYPES[typ]
    if size == 8:
        return _yes(f"the index is a 64-bit {typ}: i + stride cannot overflow it", t.start)
    limit = 2 ** (8 * size - (1 if signed else 0)) - 1
    bound = spec_for(ctx)
    spec = kernel_spec(bound)
    if spec is None:
        return _no(ctx, f"no spec bounds {quoted(n)}: a 32-bit {typ} index "
                   "i + blockDim.x * gridDim.x may pass its largest value near the end of a "
                   "large array (a 64-bit index, or a spec, proves it cannot)", n.start)
    try:
        expr = _as_spec_expr(ctx, n.text, n.start, spec, 0)
    except ValueError as e:
        return _no(ctx, f"{quoted(n)} has no value in the spec's terms: {e}", n.start)
    worst = 0.0
    try:  # every size the gate runs: the profiling sizes, the verify sizes (or its own)
        runs = list(spec.verify_sizes) or default_verify_sizes(
            spec.sizes, launch_dims(spec.block, bound.env() if isinstance(bound, Bound)
                                    else spec.env())[0])
        for sizes in (spec.sizes, *runs):
            env = bound.env(sizes) if isinstance(bound, Bound) else spec.env(sizes)
            grid, block = launch_dims(spec.grid, env), launch_dims(spec.block, env)
            threads = grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2]
            worst = max(worst, math.ceil(evaluate(expr, env)) - 1 + threads)
    except Exception as e:  # a value the spec's sizes do not give: not proven
        return _no(ctx, f"{quoted(n)}: the spec's sizes give it no value ({e})", n.start)
    if worst <= limit:
        return _yes(f"at every spec size {quoted(n)} - 1 + the threads launched is at most "
                    f"{worst:.0f} <= {limit}, the largest {typ}", n.start)
    return _no(ctx, f"at some spec size {quoted(n)} - 1 + the threads launched is {worst:.0f}, "
               f"past {limit}, the largest {typ}: the grid-stride step would overflow",
               n.start)


def _as_spec_expr(ctx: GuardContext, text: str, at: int, spec: Any, depth: int) -> str:
    """``text`` (a bound) in the spec's expression language: a kernel parameter becomes its
    spec value, a const local its initialiser (real division: never below C's integer
    division for the non-negative sizes a bound holds). ValueError when a name is neither."""
    values = {a.name: a.value for a in spec.args if a.value is not None}
    out = []
    for tok in re.split(r"([A-Za-z_]\w*)", text):
        if not tok or not (tok[0].isalpha() or tok[0] == "_"):
            out.append(tok)
            continue
        decl = lookup(ctx, tok, at)
        if decl is not None and decl.origin == "parameter" and tok in values:
            out.append(f"({values[tok]})")
        elif decl is not None and decl.origin == "local" and decl.init is not None and \
                depth < 4 and (decl.const or (ctx.function is not None and not is_assigned(
                    ctx, tok, decl.end, ctx.function.body_end))):
            init = text_of(ctx.unit.source, decl.init)
            out.append(f"({_as_spec_expr(ctx, init, decl.start, spec, depth + 1)})")
        elif decl is None and tok in spec.sizes:
            out.append(tok)
        else:
            raise ValueError(f"`{tok}` is not a kernel parameter the spec gives a value, "
                             "nor a local set once")
    return "".join(out)
