"""The plan of one match: the byte edits of every rewrite clause of its rule, each planned
by its kind (``KindEdit.plan``), after the kinds that prepare for the others (``within``:
the code its target becomes, which a ``replace`` template writes out)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from klc.edits.base import KindEdit, PlanContext, Rewrite
from klc.edits.bytes import ByteEdit

if TYPE_CHECKING:
    from klc.match import Match


def plan(match: Match, holes: dict[str, str]) -> Rewrite:
    """The byte edits of every rewrite clause of the match's rule."""
    px = PlanContext(Rewrite(match, holes), {}, [])
    edits: list[KindEdit] = list(match.rule.edits)  # type: ignore[arg-type]
    for edit in edits:
        edit.prepare(px)
    for edit in edits:
        edit.plan(px)
    # what prepare staged and no edit took over (sub-rewrites of a binding no replace
    # template writes out) edits the source in place
    px.rw.edits.extend(ByteEdit(e.start, e.end, e.text, "within") for e in px.staged)
    return px.rw
