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
from klc.match.pattern import Pattern, PNode, _names, compile_pattern

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
    return shared(table)


def shared(table: dict[tuple[Any, ...], Pattern]) -> dict[tuple[Any, ...], Pattern]:
    """The same patterns with every pattern node that is equal to another made one node
    (and their kind sets one set): an isomorphism's spellings repeat the anchor's subtrees,
    and the anchors of a library share many (``threadIdx.x``, ``$I < $N``), so the stored
    library is about a fifth of the nodes, and is read back (and specialised,
    ``klc.match.specialise``) in as much less time. A node's matcher and the memos keyed by
    a node (``klc.match.find``, ``klc.match.engine``) read only what makes nodes equal."""
    nodes: dict[tuple[Any, ...], PNode] = {}
    sets: dict[frozenset[str], frozenset[str]] = {}
    done: dict[int, PNode] = {}

    def one(p: PNode) -> PNode:
        got = done.get(id(p))
        if got is not None:
            return got
        kids = tuple(one(c) for c in p.children)
        alts = tuple(one(a) for a in p.alts)
        kinds = None if p.kinds is None else sets.setdefault(p.kinds, p.kinds)
        key = (p.type, p.text, tuple(map(id, kids)), p.metavar, p.seq, p.text_pattern,
               p.text_vars, kinds, p.dots, tuple(map(id, alts)), p.alt_checks)
        got = nodes.get(key)
        if got is None:
            same = kinds is p.kinds and all(a is b for a, b in zip(kids, p.children,
                                                                   strict=True)) \
                and all(a is b for a, b in zip(alts, p.alts, strict=True))
            got = nodes[key] = p if same else replace(p, children=kids, alts=alts,
                                                      kinds=kinds)
            if got.starts is not None:
                object.__setattr__(got, "starts", sets.setdefault(got.starts, got.starts))
        done[id(p)] = got
        return got

    patterns: dict[int, Pattern] = {}

    def pattern(q: Pattern) -> Pattern:
        got = patterns.get(id(q))
        if got is None:
            got = patterns[id(q)] = replace(
                q, elements=tuple(map(one, q.elements)), fixed=tuple(map(one, q.fixed)),
                alternatives=tuple(map(pattern, q.alternatives)))
        return got

    return {k: pattern(q) for k, q in table.items()}


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
                   tokens=(),
                   key="\0|".join(b.key for b in branches), alternatives=branches,
                   common=frozenset(common), dots=())
