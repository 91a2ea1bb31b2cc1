"""A rule's anchor as the matcher runs it: the pattern compiled from its text
(``klc.match.pattern``), expanded by the isomorphisms the rule keeps on (``klc.match.iso``),
and ``anchor any``'s branches as one pattern; compiled once per process, or taken from the
compiled rule library's cache (``klc.rule.cache``: ``compiled_anchors`` gives what it
stores, ``seed_anchors`` takes it back)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from klc.errors import KlcError
from klc.match.iso import expand_isomorphisms
from klc.match.pattern import Pattern, _names, compile_pattern

if TYPE_CHECKING:
    from klc.rule import Rule


@lru_cache(maxsize=4096)
def _compiled(anchor: str, where: str, kinds: tuple[tuple[str, str], ...] = (),
              isos_off: tuple[str, ...] = ()) -> Pattern:
    pattern = base = compile_pattern(anchor, where, kinds)
    pattern = expand_isomorphisms(pattern, isos_off, where)
    if base.dots and not pattern.dots:  # (the statement dots stay the anchor's)
        pattern = replace(pattern, dots=base.dots)
    return pattern


# patterns taken from the rule library's cache, by what ``pattern_of`` compiles them from
_SEEDED: dict[tuple[Any, ...], Pattern] = {}
_MAX_SEEDED = 4096


def _what(rule: Rule) -> tuple[Any, ...]:
    """What a rule's pattern is compiled from. A skill reads no code through its locals and
    helpers (``read_through`` is for the walks of experts' code, a simplification's: on
    every file a listing reads, a skill's retry cost more than the rest of the listing)."""
    isos_off = rule.isos_off
    if rule.kind == "skill" and "read_through" not in isos_off:
        isos_off = (*isos_off, "read_through")
    return (rule.anchors or rule.anchor, f"{rule.path}:{rule.anchor_line}:{rule.anchor_col}",
            rule.metavar_kinds, isos_off)


def pattern_of(rule: Rule) -> Pattern:
    """The rule's anchor with its metavariables' kinds, compiled once per process (cached
    by its text); ``anchor any``: its branches, as one pattern's ``alternatives``."""
    what = _what(rule)
    seeded = _SEEDED.get(what)
    if seeded is not None:
        return seeded
    if rule.anchors:
        return _alternation(*what)
    return _compiled(*what)


def compiled_anchors(rules: Sequence[Rule]) -> dict[tuple[Any, ...], Pattern]:
    """The patterns of these rules' anchors and of the rules nested in their edits (a
    ``within`` block's, matched inside each site: a process would compile them on its first
    such site), by what they are compiled from; an anchor the matcher refuses is left out
    (``pattern_of`` says why where it is used)."""
    table = {}
    todo = list(rules)
    while todo:
        rule = todo.pop()
        todo.extend(sub for e in rule.edits for sub in e.subrules())
        try:
            table[_what(rule)] = pattern_of(rule)
        except KlcError:
            continue
    return table


def seed_anchors(table: object) -> None:
    """Take patterns ``compiled_anchors`` gave (read back from the cache): a TypeError, and
    nothing taken, when it is not such a table."""
    if not isinstance(table, dict) or not all(
            isinstance(k, tuple) and len(k) == 4 and isinstance(v, Pattern)
            for k, v in table.items()):
        raise TypeError("not a table of compiled anchors")
    if len(_SEEDED) + len(table) > _MAX_SEEDED:  # (a process that loads many libraries)
        _SEEDED.clear()
    _SEEDED.update(table)


@lru_cache(maxsize=1024)
def _alternation(anchors: tuple[str, ...], where_: str,
                 kinds: tuple[tuple[str, str], ...] = (),
                 isos_off: tuple[str, ...] = ()) -> Pattern:
    """One pattern for ``anchor any``: the first branch's fields (what tools that show a
    pattern read), every branch in ``alternatives``, the words all branches need, and the
    metavariables all bind (``common``)."""
    branches = tuple(_compiled(a, where_, kinds, isos_off) for a in anchors)
    first = branches[0]
    words = set(first.words).intersection(*(b.words for b in branches[1:]))
    common = _names(first.elements).intersection(*(_names(b.elements)
                                                    for b in branches[1:]))
    return replace(first, code="\n|\n".join(anchors), words=tuple(sorted(words)), runs=(),
                   key="\0|".join(b.key for b in branches), alternatives=branches,
                   common=frozenset(common), dots=())
