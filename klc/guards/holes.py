"""Relations between hole values (``klc.reverse`` learns them; the search filler checks them
before any other static check, since they need no code: ``Traits.hole_relation``)."""

from __future__ import annotations

from typing import Any

from klc.guards.registry import ArgSpec, GuardContext, Verdict, predicate


@predicate("is_product", ArgSpec("A", frozenset({"int", "hole"})),
           ArgSpec("B", frozenset({"int", "hole"})), ArgSpec("C", frozenset({"int", "hole"})),
           reads=("holes",))
def is_product(ctx: GuardContext | None, a: Any, b: Any, c: Any) -> Verdict:
    """A = B * C, all three integers (hole values or literals): values that a simplification
    erased together and that were tied at every site it was seen (a tile T walked R rows at
    a time in T / R steps: ``is_product(?t, ?r, ?factor)``)."""
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (a, b, c)):
        return Verdict(False, f"is_product: {a!r}, {b!r}, {c!r} are not all integers", None)
    if a == b * c:
        return Verdict(True, f"{a} = {b} * {c}", None)
    return Verdict(False, f"{a} != {b} * {c} (the values are tied: the first is the product "
                   "of the other two)", None)
