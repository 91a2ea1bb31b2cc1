"""Guard predicates about which thread index walks which dimension of memory
(passes/thread_roles.rule): a 2-D kernel whose fastest-varying thread index (``threadIdx.x``:
neighbouring lanes of a warp) is the row of a row-major array reads and writes addresses a row
apart from lane to lane, one memory transaction per lane; given the column instead, the lanes
of a warp touch neighbouring addresses."""

from __future__ import annotations

from tree_sitter import Node

from klc.analysis.tree import in_span, nodes_of, quoted, text_of
from klc.guards.registry import ArgSpec, GuardContext, Verdict, _metavar, _no, _yes, predicate
from klc.match import Binding

# what an index passes through on its way to a product, unchanged in scale
_THROUGH = frozenset({"parenthesized_expression", "cast_expression"})


def _scaled(node: Node, src: bytes) -> bool:
    """The identifier ``node`` is an operand of a product or a shift (through parentheses
    and casts): ``r * K``, ``(size_t)r * ld``, ``K * (r)``, ``r << 5``."""
    cur = node
    while cur.parent is not None and cur.parent.type in _THROUGH:
        cur = cur.parent
    parent = cur.parent
    if parent is None or parent.type != "binary_expression":
        return False
    op = parent.child_by_field_name("operator")
    return op is not None and text_of(src, op) in ("*", "<<")


def _uses(ctx: GuardContext, name: str, stmts: Binding) -> tuple[list[Node], list[Node]]:
    """(scaled uses, other uses) of the variable ``name`` in the code bound to $$$S."""
    src = ctx.unit.source
    scaled, other = [], []
    for ident in in_span(nodes_of(ctx.unit, "identifier"), stmts.start, stmts.end):
        if text_of(src, ident) != name:
            continue
        (scaled if _scaled(ident, src) else other).append(ident)
    return scaled, other


@predicate("walks_slow_dimension", _metavar("$R"), _metavar("$C"),
           ArgSpec("$$$S", frozenset({"metavar", "sequence"})), reads=("arguments",))
def walks_slow_dimension(ctx: GuardContext, r: Binding, c: Binding, stmts: Binding) -> Verdict:
    """In the code bound to $$$S, the index $R scales an address (it is multiplied by a row
    length or shifted somewhere: ``A[r * K + k]``, ``C + (size_t)r * ldc``) and $C never is
    (``B[k * N + c]``, ``C[r * N + c]``) while the code uses it: $R walks the slow
    dimension of a row-major array and $C the contiguous one. When $R comes from
    ``threadIdx.x`` the lanes of a warp are a row apart; the role swap gives them $C."""
    src = ctx.unit.source
    rs, _ = _uses(ctx, r.text.strip(), stmts)
    cs, cother = _uses(ctx, c.text.strip(), stmts)
    if cs:
        node = cs[0]
        return _no(ctx, f"`{c.text.strip()}` scales an address too "
                   f"(`{text_of(src, node.parent or node)}` at {ctx.unit.where(node.start_byte)}):"
                   " neither index walks the contiguous dimension alone", node.start_byte)
    if not rs:
        return _no(ctx, f"`{r.text.strip()}` scales no address in {quoted(stmts)}: it does not "
                   "walk the slow dimension", stmts.start)
    if not cother:
        return _no(ctx, f"{quoted(stmts)} does not use `{c.text.strip()}`", stmts.start)
    node = rs[0]
    return _yes(f"`{r.text.strip()}` scales `{text_of(src, node.parent or node)}` "
                f"({ctx.unit.where(node.start_byte)}) and `{c.text.strip()}` scales nothing: "
                f"`{r.text.strip()}` walks the slow dimension, `{c.text.strip()}` the "
                "contiguous one", node.start_byte)
