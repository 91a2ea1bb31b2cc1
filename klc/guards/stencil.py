"""Guard predicates for a 2-D stencil's window (passes/halo_tile.rule): ``opposite_constants``.

A window walked by offsets, ``for (int dy = -R; dy <= R; dy++)``, is written with its lower
bound as the negation of the radius (``-MASK_RADIUS``) or as a literal (``-1``, which the
parser reads as one number, not as a minus applied to ``1``). The anchor binds the two bounds
apart, and ``opposite_constants(lower, upper)`` says that they fold to opposite constants:
the offsets then run over [-R, R], the window's extent that the halo of R covers.
"""

from __future__ import annotations

from klc.analysis.constants import constant_of
from klc.analysis.tree import quoted
from klc.guards.registry import GuardContext, Verdict, _metavar, _no, _yes, predicate
from klc.match import Binding


@predicate("opposite_constants", _metavar("$A"), _metavar("$B"),
           reads=("arguments", "declarations", "spec"))
def opposite_constants(ctx: GuardContext, a: Binding, b: Binding) -> Verdict:
    """$A and $B fold to integer constants (literals, #defines, template arguments the spec
    gives) and $A = -$B: the bounds ``-R`` and ``R`` of a window's offsets, however the lower
    one is spelled (``-1``, ``-R``, ``-MASK_RADIUS``)."""
    va, why_a = constant_of(ctx, a)[:2]
    vb, why_b = constant_of(ctx, b)[:2]
    for v, why, x in ((va, why_a, a), (vb, why_b, b)):
        if not isinstance(v, int) or isinstance(v, bool):
            return _no(ctx, f"{quoted(x)} is not an integer constant"
                       f"{': ' + why if why else ''}", x.start)
    if va == -vb:
        return _yes(f"{quoted(a)} = {va} = -{quoted(b)}", a.start)
    return _no(ctx, f"{quoted(a)} = {va} is not the negation of {quoted(b)} = {vb}", a.start)
