"""Guard predicates for a 2-D stencil's clipped window (passes/window_interior.rule and its
inverse):

- ``else_branch([region])``: REGION (default ``anchor``) is the whole else branch of an
  ``if``: the clipped loops of a window that already has its interior path (the skill's
  own output), so that the skill, which keeps the clipped loops for the border, does not
  split them again."""

from __future__ import annotations

from klc.analysis.tree import text_of
from klc.guards.registry import GuardContext, Verdict, _no, _region, _region_arg, _yes, predicate


@predicate("else_branch", _region_arg(), reads=("position",))
def else_branch(ctx: GuardContext, region: str = "anchor") -> Verdict:
    """REGION (default ``anchor``) is the whole else branch of an ``if`` statement: the only
    statement of its ``else { ... }`` (comments and pragmas aside), or the statement ``else``
    names directly."""
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    node = ctx.unit.root.descendant_for_byte_range(start, end)
    while node is not None and node.parent is not None and \
            (node.parent.start_byte, node.parent.end_byte) == (start, end):
        node = node.parent
    parent = node.parent if node is not None else None
    if parent is not None and parent.type == "compound_statement":
        # a comment or a ``#pragma`` (``#pragma unroll`` before the loop) is no statement
        stmts = [c for c in parent.named_children if c.type not in ("comment", "preproc_call")]
        if len(stmts) == 1 and stmts[0].start_byte == start and stmts[0].end_byte == end:
            parent = parent.parent
    if parent is not None and parent.type == "else_clause":
        return _yes(f"{label} is the else branch of the if at "
                    f"{ctx.unit.where(parent.parent.start_byte if parent.parent else start)}",
                    start)
    what = parent.type if parent is not None else "nothing"
    return _no(ctx, f"{label} is not an else branch (it lies in {what}: "
               f"`{text_of(ctx.unit.source, parent)[:40] if parent is not None else ''}`)",
               start)
