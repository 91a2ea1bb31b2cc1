"""Guard predicates for accumulations that several blocks share through atomics
(passes/column_split.rule and its inverse): a block's partial sum added to the output with
``atomicAdd`` instead of a plain ``+=``.

- ``atomic_accumulator($OUT, $A)``: $OUT is a pointer parameter of the kernel (global
  memory) whose element type is one ``atomicAdd`` takes, and the sum $A has that same type,
  so that ``atomicAdd(&out[c], a)`` adds exactly what ``out[c] += a`` adds (no conversion of
  the partial sum, which an integer output would truncate once per block);
- ``grid_extent_is(AXIS, ?gy)``: for simplifications, the grid's extent along AXIS is
  ?gy before the pass divides it (pass-only: the inverse skill checks the grid it starts
  from, ``grid_dim(y, ==, 1)``)."""

from __future__ import annotations

from typing import Any

from klc.analysis.declarations import lookup
from klc.analysis.tree import binding_node, quoted, text_of, unparen
from klc.analysis.types import norm_type, type_of
from klc.guards.gridred import grid_dim
from klc.guards.registry import ArgSpec, GuardContext, Verdict, _metavar, _no, _yes, predicate
from klc.match import Binding

# the element types of CUDA's atomicAdd overloads that klc's gate allocates (sm_60 and up:
# double too); __half and __nv_bfloat16 are left out (sm_70 / sm_80 and a header each)
ATOMIC_ADD_TYPES = frozenset({"int", "unsigned int", "unsigned long long", "float", "double"})


@predicate("atomic_accumulator", _metavar("$OUT"), _metavar("$A"),
           reads=("declarations",))
def atomic_accumulator(ctx: GuardContext, out: Binding, a: Binding) -> Verdict:
    """$OUT is a pointer parameter of the kernel whose element type atomicAdd takes (int,
    unsigned int, unsigned long long, float, double), and $A is a local of that same type:
    atomicAdd(&$OUT[i], $A) adds what $OUT[i] += $A adds."""
    unit, src = ctx.unit, ctx.unit.source
    node = binding_node(out)
    if node is None or unparen(node).type != "identifier":
        return _no(ctx, f"{quoted(out)} ({unit.where(out.start)}) is not a name", out.start)
    decl = lookup(ctx, text_of(src, unparen(node)), out.start)
    if decl is None or decl.origin != "parameter" or decl.pointer != 1:
        return _no(ctx, f"{quoted(out)} ({unit.where(out.start)}) is not a pointer parameter "
                   "of the kernel (global memory an atomic can add to)", out.start)
    elem = norm_type(decl.base)
    if elem not in ATOMIC_ADD_TYPES:
        return _no(ctx, f"{quoted(out)} has element type {decl.base}, which atomicAdd does "
                   f"not take (it takes {', '.join(sorted(ATOMIC_ADD_TYPES))})", out.start)
    anode = binding_node(a)
    typ = type_of(ctx, anode) if anode is not None else None
    if typ is None or typ.decl is None:
        return _no(ctx, f"the type of {quoted(a)} ({unit.where(a.start)}) is not declared "
                   "in the kernel", a.start)
    if typ.pointer or norm_type(typ.base) != elem:
        return _no(ctx, f"{quoted(a)} has type {typ.base}{'*' * typ.pointer} ({typ.how}), "
                   f"not {elem}, the element type of {quoted(out)}: atomicAdd would convert "
                   "each block's partial sum", a.start)
    return _yes(f"{quoted(out)} is a {elem} parameter and {quoted(a)} a {elem} local: "
                "atomicAdd adds it as += did", out.start)


@predicate("grid_extent_is", ArgSpec("axis", frozenset({"name"}), frozenset({"x", "y", "z"})),
           ArgSpec("N", frozenset({"int", "hole"})), reads=("spec",), pass_only=True)
def grid_extent_is(ctx: GuardContext, axis: str, n: Any) -> Verdict:
    """For simplifications: the grid's extent along AXIS is known exactly (spec or every
    launch) and equals N, so that grid.AXIS /= N leaves one block along it. A *pass-only*
    predicate: it speaks of the launch before the pass's launch edit, which the inverse
    skill's launch edit undoes (``klc learn`` leaves it out of the skill's guard)."""
    return grid_dim(ctx, axis, "==", n)
