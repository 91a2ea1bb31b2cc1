"""Hole values from the site's launch: the values its own launch fixes
(``klc.guards.geometry.site_holes``, re-exported here), and the values that give a site the
block its skill was learned with (:func:`launch_anchors`).

A skill that reshapes the block (``rewrite launch block.x /= ?f``, ``block.y *= ?ty``)
records its holes relative to the kernel it was learned on: the column_sum lineage's naive
kernel had 64-thread blocks, so the learned ``?f`` is 2 (64 / 2 = 32 columns per block). What
transfers is the block the expert chose (32 x 32, recorded in the card's conditions by
``klc learn``: "Held at the sites: ... block [32, 32, 1]"), not the factor: on a kernel
launched with 256-thread blocks the same block is ``?f = 8``. :func:`launch_anchors` gives
each such hole the value that reaches the learned extent from the site's exact block (the
spec's, or every launch's in the file), when that value divides evenly and lies in the
hole's domain; the search filler ranks it first (``klc.fill.search.ranked_values``).
Nothing is checked here: the guards still judge every value.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from klc.guards.geometry import geometry_relations, site_holes

if TYPE_CHECKING:
    from klc.pipeline import Site
    from klc.rule import Rule

__all__ = ["block_holes", "coarsening_holes", "geometry_relations", "larger_value",
           "launch_anchors", "learned_block", "site_holes"]

# klc.reverse._conditions writes the optimized version's geometry as "block [x, y, z]"
_LEARNED_BLOCK = re.compile(r"\bblock \[(\d+), (\d+), (\d+)\]")


def learned_block(rule: Rule) -> tuple[int, int, int] | None:
    """The block of the first site a learned skill's card says it held at, or None."""
    m = _LEARNED_BLOCK.search(rule.card.conditions or "")
    if m is None:
        return None
    x, y, z = (int(g) for g in m.groups())
    return (x, y, z) if min(x, y, z) >= 1 else None


def block_holes(rule: Rule) -> list[tuple[int, str, str]]:
    """(axis index, operator, hole name) of each ``rewrite launch block.<axis> <op>= ?h``."""
    from klc.edits.launch import Launch

    out = []
    for e in rule.edits:
        if isinstance(e, Launch) and e.dim == "block" and isinstance(e.factor, str) \
                and e.factor.startswith("?"):
            out.append(("xyz".index(e.axis), e.op, e.factor[1:]))
    return out


def coarsening_holes(rule: Rule) -> list[str]:
    """The integer holes that divide the grid (``rewrite launch grid.<axis> /= ?h``): how
    many elements, rows or blocks' worth of work each thread or block takes on (a grid-stride
    loop's coarsening factor). Any value keeps such a loop correct; the best one depends on
    the kernel and the device, not on the lineage the skill was learned from."""
    from klc.edits.launch import Launch

    out = []
    for e in rule.edits:
        if isinstance(e, Launch) and e.dim == "grid" and e.op == "/" \
                and isinstance(e.factor, str) and e.factor.startswith("?"):
            decl = rule.holes.get(e.factor[1:])
            if decl is not None and decl.type == "int" and decl.name not in out:
                out.append(decl.name)
    return out


def larger_value(rule: Rule, name: str, value: str) -> str | None:
    """The next value of an integer hole's domain above ``value``: the next listed value of a
    set (``{2, 4, ..., 64}``: 16 -> 32), twice the value in a range; None at the top."""
    decl = rule.holes.get(name)
    if decl is None or decl.type != "int":
        return None
    try:
        v = int(str(value).strip())
    except ValueError:
        return None
    if decl.values is not None:
        above = sorted(int(x) for x in decl.values if int(x) > v)
        return str(above[0]) if above else None
    nxt = 2 * v if v > 0 else 1
    return str(nxt) if decl.contains(nxt) else None


def launch_anchors(rule: Rule, site: Site, spec: Any | None) -> dict[str, str]:
    """Hole name -> the value that turns the site's block into the learned one, for each
    block-reshaping hole where that value exists (module doc). Empty when the card records
    no block, the rule reshapes none, or the site's block is not known exactly."""
    holes = block_holes(rule)
    learned = learned_block(rule) if holes else None
    if learned is None:
        return {}
    from klc.analysis.constants import block_dims
    from klc.guards import GuardContext

    exact, _bound, _how = block_dims(GuardContext(site.match, spec=spec, clang=False))
    if exact is None:
        return {}
    out: dict[str, str] = {}
    for axis, op, name in holes:
        cur, want = exact[axis], learned[axis]
        num, den = (cur, want) if op == "/" else (want, cur)
        if num % den or num // den < 1:
            continue
        value = str(num // den)
        decl = rule.holes.get(name)
        if decl is not None and decl.contains(value):
            out[name] = value
    return out


def fresh_value(site: Site, name: str, strict: bool = False) -> str:
    """The first of ``name``, ``name_1``, ``name_2``, ... that is fresh in the site's function
    as the pipeline judges a declared hole's value (``klc.guards.loops.fresh_variant``);
    ``name`` itself when none is. ``strict``: as the guard's own ``fresh_name(?h)`` judges
    it, where the matched code's variables count too."""
    from klc.guards import GuardContext
    from klc.guards.loops import fresh_variant

    return fresh_variant(GuardContext(site.match), name, strict)
