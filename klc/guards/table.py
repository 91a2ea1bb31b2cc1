"""The table of guard predicates: every family of ``klc.guards``, named here, and what is read
from the table (a call's check, a predicate's traits).

The families are listed once, in ``FAMILIES``: each module declares its predicates with
``@predicate`` (``klc.guards.registry``), and ``PREDICATES`` is collected from them. A new
family is one module and its name here (``tests/test_architecture.py`` checks that every
module of the package that declares a predicate is listed).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from klc.guards import (
    accumulate,
    alignment,
    btranspose,
    coalesce,
    coarsen,
    columns,
    constants,
    declarations,
    digits,
    gemm,
    gridfold,
    gridred,
    gridstride,
    holes,
    lanes,
    launch,
    loops,
    macros,
    padding,
    reductions,
    regblock,
    stencil,
    strides,
    treeaddr,
    types,
    warptile,
    window,
    writes,
)
from klc.guards.registry import Predicate, Traits, collect
from klc.rule.guard import GuardCall

# the generic families, then those of one kind of rewrite each (docs/architecture.md)
FAMILIES = (declarations, types, constants, writes, launch, alignment, loops, holes,
            lanes, reductions, gridstride, gridfold, gridred, columns, coalesce, gemm, regblock,
            btranspose, treeaddr, strides, macros, padding, stencil,
            warptile, digits, accumulate, window, coarsen)

PREDICATES: dict[str, Predicate] = collect(FAMILIES)


def with_trait(trait: Callable[[Traits], bool]) -> frozenset[str]:
    """The names of the registered predicates whose traits have it: ``with_trait(lambda t:
    t.reads_layout)``."""
    return frozenset(name for name, p in PREDICATES.items() if trait(p.traits))


def traits(name: str) -> Traits | None:
    """The traits of predicate ``name`` (None: no such predicate)."""
    pred = PREDICATES.get(name)
    return pred.traits if pred is not None else None


def check_call(call: GuardCall) -> list[tuple[int, int, str]]:
    """Load-time check of one call: a known predicate, the right number and kinds of
    arguments. Returns (line, col, message) for each problem."""
    pred = PREDICATES.get(call.name)
    if pred is None:
        close = difflib.get_close_matches(call.name, PREDICATES, n=3, cutoff=0.5)
        rest = sorted(n for n in PREDICATES if n not in close)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        return [(call.line, call.col, f"unknown guard predicate {call.name!r}{hint} "
                 f"(known: {', '.join(close + rest)})")]
    problems: list[tuple[int, int, str]] = []
    required = sum(1 for p in pred.params if not p.optional)
    if not required <= len(call.args) <= len(pred.params):
        count = (f"{required}" if required == len(pred.params)
                 else f"{required} to {len(pred.params)}")
        noun = "argument" if count == "1" else "arguments"
        problems.append((call.line, call.col, f"{call.name} takes {count} {noun} "
                         f"({pred.signature}), got {len(call.args)}"))
        return problems
    for i, (arg, spec) in enumerate(zip(call.args, pred.params, strict=False), start=1):
        if not spec.accepts(arg):
            problems.append((arg.line, arg.col, f"argument {i} of {call.name} "
                             f"({spec.label}) must be {spec.words()}, got {arg}"))
    return problems
