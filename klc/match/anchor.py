"""A rule's anchor as the matcher runs it: the pattern compiled from its text
(``klc.match.pattern``), expanded by the isomorphisms the rule keeps on (``klc.match.iso``),
and ``anchor any``'s branches as one pattern; compiled once per process."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

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


def pattern_of(rule: Rule) -> Pattern:
    """The rule's anchor with its metavariables' kinds, compiled once per process (cached
    by its text); ``anchor any``: its branches, as one pattern's ``alternatives``."""
    where_ = f"{rule.path}:{rule.anchor_line}:{rule.anchor_col}"
    if rule.anchors:
        return _alternation(rule.anchors, where_, rule.metavar_kinds, rule.isos_off)
    return _compiled(rule.anchor, where_, rule.metavar_kinds, rule.isos_off)


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
