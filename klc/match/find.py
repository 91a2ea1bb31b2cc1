"""Where a pattern matches in a unit: candidates by node type, early rejects by words and token
runs, each match with its bindings."""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from tree_sitter import Node

from klc.cuda.syntax import word_occurrences
from klc.match.dots import dots_hold
from klc.match.engine import _Matcher, block_statements
from klc.match.iso_checks import split_obligations
from klc.match.model import Binding, Match
from klc.match.pattern import (
    _SPELLED_BY_MOST,
    EARLY,
    Pattern,
    PNode,
    _size,
    _tokens_of,
    _words_of,
)
from klc.match.reading import read_matches
from klc.match.specialise import fast_of
from klc.rule.dots import RUN_PREFIX

if TYPE_CHECKING:
    from klc.cuda.model import Function, Unit
    from klc.match.scope import Where
    from klc.rule import Rule


def index_nodes(unit: Unit, types: Iterable[str]) -> dict[str, list[Node]]:
    """All nodes of the given types, by type, in source order (the unit's per-type index:
    one query run per unit, shared with the model and the guards)."""
    return unit.nodes_by_type(types)


def find_matches(pattern: Pattern, unit: Unit, rule: Rule | None = None,
                 candidates: dict[str, list[Node]] | None = None) -> Iterator[Match]:
    """Every place in ``unit`` where ``pattern`` matches, in source order: for ``anchor any``
    the matches of every branch (one per span, the first branch's), keeping the bindings all
    branches make; a match whose statement dots skipped what they may not is none."""
    if pattern.alternatives:
        yield from merge_branches(pattern, (
            find_matches(branch, unit, rule, candidates if candidates is not None
                         and branch.root_type in candidates else None)
            for branch in pattern.alternatives))
        return
    for mt in _matches(pattern, unit, rule, candidates):
        if (not pattern.dots or dots_hold(pattern, mt)) and not binds_qualified_type(mt):
            yield mt


def binds_qualified_type(mt: Match) -> bool:
    """Whether a metavariable bound a type with a qualifier inside it: tree-sitter reads
    ``unsigned const i`` (``long const``, not ``const unsigned``) as one sized type holding
    the ``const``, which a template would write back wherever it writes the metavariable (a
    cast ``(unsigned const)``, the declaration of an index a grid-stride step assigns). No
    match: ``const unsigned i`` and ``int const i`` are the spellings the ``const_local``
    isomorphism takes, the type bound without its const."""
    for b in mt.bindings.values():
        nodes = b.nodes
        if len(nodes) == 1 and nodes[0].type == "sized_type_specifier" and any(
                c.type == "type_qualifier" for c in nodes[0].children):
            return True
    return False


def merge_branches(pattern: Pattern, branches: Iterable[Iterable[Match]]) -> list[Match]:
    """``anchor any``'s matches from its branches' (in branch order): one per span, the first
    branch's, keeping the bindings all branches make, in source order. The branches' matches
    are left as they are (another rule's anchor may be one of the branches)."""
    common = pattern.common
    kept: dict[tuple[str, ...], tuple[str, ...] | None] = {}  # names kept, None for all
    out = []
    for mt in first_per_span(branches):
        bindings = mt.bindings
        names = tuple(bindings)
        keep = kept.get(names, _UNKNOWN)
        if keep is _UNKNOWN:
            keep = kept[names] = common_bindings(names, common)
        out.append(Match(mt.rule, mt.unit, mt.function, mt.start, mt.end, mt.nodes,
                         dict(bindings) if keep is None else
                         {n: bindings[n] for n in keep},  # type: ignore[union-attr]
                         obligations=mt.obligations, reads=mt.reads))
    return out


def first_per_span(branches: Iterable[Iterable[Match]]) -> list[Match]:
    """The matches of ``anchor any``'s branches (in branch order), one per span, the first
    branch's, as they are (all their bindings: ``merge_branches`` keeps those that all
    branches make), in source order."""
    found: dict[tuple[int, int], Match] = {}
    for matches in branches:
        for mt in matches:
            found.setdefault((mt.start, mt.end), mt)
    out = list(found.values())
    out.sort(key=_by_end, reverse=True)  # (two stable sorts: by start, then the longest)
    out.sort(key=_by_start)
    return out


def common_bindings(names: tuple[str, ...], common: frozenset[str]) -> tuple[str, ...] | None:
    """Of a branch match's bindings (by name, in order), those ``anchor any`` keeps: the
    metavariables all its branches bind and the runs of statement dots; None for all."""
    keep = tuple(n for n in names if n in common or n.startswith(RUN_PREFIX))
    return None if len(keep) == len(names) else keep


def first_per_name(pattern: Pattern, unit: Unit, where_of: Callable[[Pattern], Where],
                   target: str, names_of: Callable[[Function], Iterable[str]]
                   ) -> list[Match] | None:
    """Of the matches of ``pattern`` (``anchor any``: as ``first_per_span`` gives them, all
    their bindings), in source order, the first in each function that binds ``target`` to
    each name ``names_of`` gives for it (a function's parameters): the same matches the
    whole list holds, found without matching the rest. A match that binds a name has its
    identifier in its span, so only the nodes around the name's occurrences in the function
    are looked at (in order, each span's branches in order, until one binds it): those of a
    branch's type that ``where_of`` admits as its candidates, never listed. None (then every
    match is needed) when a branch is a run of statements or has statement dots, or a name
    is not an identifier."""
    branches = pattern.alternatives or (pattern,)
    if pattern.dots or any(b.is_sequence or b.dots or b.alternatives for b in branches):
        return None
    live = [(b, where_of(b)) for b in branches if possible(b, unit)]
    if not live:
        return []
    types = {b.root_type for b, _ in live}
    src, root, memo = unit.source, unit.root, unit.memo
    m = _Matcher(src, unit._kids)
    winners: dict[tuple[int, int], Match | None] = {}  # the match that holds each span
    out: list[Match] = []
    for fn in unit.functions:
        if not any(w.within(fn.start, fn.end) for _, w in live):
            continue  # (no candidate starts in this function)
        names = list(dict.fromkeys(n for n in names_of(fn) if n))
        if not all(n.isidentifier() for n in names):
            return None
        top = root.descendant_for_byte_range(fn.start, fn.end)
        if top is None:
            continue
        cursor = top.walk()
        for name in names:
            word = name.encode()
            size = len(word)
            seen: set[tuple[int, int]] = set()
            for at in word_occurrences(src, word, fn.start, fn.end):
                # the candidate kinds on the path down to the occurrence, outermost first:
                # those not seen at an earlier occurrence all start after it (source order);
                # the path kept for the unit's other anchors (``Unit.memo``)
                key = (_PATH, top.id, at)
                down = memo.get(key)
                if down is None:
                    down = memo[key] = [top]
                    cursor.reset(top)
                    while cursor.goto_first_child_for_byte(at) is not None:
                        node = cursor.node
                        if node is None or node.start_byte > at or node.end_byte < at + size:
                            break
                        down.append(node)
                path = [node for node in down if node.type in types]
                found = False
                for node in path:
                    span = (node.start_byte, node.end_byte)
                    if span in seen:
                        continue
                    seen.add(span)
                    if span not in winners:
                        winners[span] = _winner(m, unit, live, *span, path, memo)
                    won = winners[span]
                    if won is not None and won.function is fn:
                        x = won.bindings.get(target)
                        if x is not None and x.text.strip() == name:
                            out.append(won)
                            found = True
                            break
                if found:
                    break
    out.sort(key=_by_end, reverse=True)
    out.sort(key=_by_start)
    return out


def _winner(m: _Matcher, unit: Unit, live: list[tuple[Pattern, Where]], s: int, e: int,
            around: Iterable[Node], memo: dict[Any, Any]) -> Match | None:
    """The match that holds the span [s, e) among ``anchor any``'s: the first branch's that
    matches a candidate of it (the nodes of the span on the path, outermost first: their
    document order), or None. Each branch's answer at a span is kept in ``memo`` (the unit's:
    anchors that share a branch and its candidates share it)."""
    nodes = None
    for b, where in live:
        key = (_WON, b.key, where, s, e)  # (the object, by identity: kept while asked)
        won = memo.get(key, _UNKNOWN)
        if won is _UNKNOWN:
            if nodes is None:
                nodes = [n for n in around if n.start_byte == s and n.end_byte == e]
            won = memo[key] = _branch_match(m, unit, b, where, s, e, nodes)
        if won is not None:
            return won  # type: ignore[no-any-return]
    return None


def _branch_match(m: _Matcher, unit: Unit, b: Pattern, where: Where, s: int, e: int,
                  nodes: list[Node]) -> Match | None:
    """A branch's match at a candidate of the span [s, e) among ``nodes``, or None."""
    find = unit.source.find
    if any(find(w, s, e) < 0 for w in b.words):
        return None
    kind = b.root_type
    for node in nodes:
        if node.type != kind or not where.holds(node):
            continue
        bound: dict[str, Binding] = {}
        if m.node(b.elements[0], node, bound):
            oblige = split_obligations(bound) if _obliges(b) else ()
            return Match(None, unit, unit.function_at(s), s, e, (node,),  # type: ignore[arg-type]
                         bound, obligations=oblige)
    return None


_UNKNOWN: Any = object()
_by_start = operator.attrgetter("start")
_by_end = operator.attrgetter("end")


def possible(pattern: Pattern, unit: Unit) -> bool:
    """False when a pattern (not ``anchor any``) cannot match anywhere in the unit: a word of
    the anchor is not in the file at all, nor a run of its tokens (the early reject). What
    the unit holds is remembered per word and run (``Unit.memo``): the anchors of a library
    share many."""
    present = unit.memo.get(_PRESENT)
    if present is None:
        present = unit.memo[_PRESENT] = {}
    held = present.get(pattern.key)  # (asked once per rule's branch, and again to match)
    if held is None:
        held = present[pattern.key] = _possible(pattern, unit, present)
    return held  # type: ignore[no-any-return]


def _possible(pattern: Pattern, unit: Unit, present: dict[Any, bool]) -> bool:
    source = None
    for w in pattern.words:
        has = present.get(w)
        if has is None:
            if source is None:
                source = unit.source
            has = present[w] = w in source
        if not has:
            return False
    return _runs_held(pattern.runs, unit, present)


def _runs_held(runs: tuple[bytes, ...], unit: Unit, present: dict[Any, bool]) -> bool:
    """Whether the unit's squeezed text holds every run of tokens, each asked once per unit
    (kept in ``present``)."""
    for r in runs:
        key = b"\0" + r  # (runs are looked for in the squeezed text)
        has = present.get(key)
        if has is None:
            has = present[key] = r in unit.squeezed
        if not has:
            return False
    return True


class AnchorWords:
    """What ``possible`` asks of a file for every anchor of a library (each ``anchor any``
    branch), asked once per file for them all (``fill``): each set of words and runs that
    some anchors share, its words the longest first (most often the rarest) until one is
    not in the file, each word looked for once. Made once per list of anchors."""

    __slots__ = ("groups", "kinds")

    def __init__(self, patterns: Iterable[Pattern]) -> None:
        branches = {q.key: q for p in patterns for q in (p.alternatives or (p,))}
        groups: dict[tuple[frozenset[bytes], tuple[bytes, ...]],
                     tuple[list[str], set[str]]] = {}
        for q in branches.values():
            keys, kinds = groups.setdefault((frozenset(q.words), q.runs), ([], set()))
            keys.append(q.key)
            kinds.add(q.root_type)
        self.groups = tuple((tuple(sorted(words, key=lambda w: (-len(w), w))), runs,
                             tuple(keys), frozenset(kinds))
                            for (words, runs), (keys, kinds) in groups.items())
        # the kinds any of them starts at: the index of every file holds them all (one
        # compiled query for the library: a compile costs 13-18 ms, and each set of kinds
        # the files of a run asked for was one more, in every worker)
        self.kinds = tuple(sorted({k for g in self.groups for k in g[3]}))

    def fill(self, unit: Unit) -> set[str]:
        """Whether each anchor may match in the unit, kept where ``possible`` reads it; the
        kinds of those that may."""
        present = unit.memo.get(_PRESENT)
        if present is None:
            present = unit.memo[_PRESENT] = {}
        source = unit.source
        kinds: set[str] = set()
        for words, runs, keys, starts in self.groups:
            # (a group's words asked the longest first, until one is not in the file: a
            # word only groups without one of their words hold is never looked for)
            held = True
            for w in words:
                has = present.get(w)
                if has is None:
                    has = present[w] = w in source
                if not has:
                    held = False
                    break
            held = held and _runs_held(runs, unit, present)
            for k in keys:
                present[k] = held
            if held:
                kinds |= starts
        return kinds


def anchor_words(patterns: list[Pattern]) -> AnchorWords:
    """``AnchorWords`` of a list of anchors, made once for a library (the same patterns, in
    order: a command asks for the same library in every file)."""
    held = _ANCHOR_WORDS.get(len(patterns))
    if held is None or len(held[0]) != len(patterns) or not all(
            a is b for a, b in zip(held[0], patterns, strict=True)):
        held = _ANCHOR_WORDS[len(patterns)] = (tuple(patterns), AnchorWords(patterns))
    return held[1]


# by the number of anchors: the last list of that many, and its words (a command lists with
# one library; its tests with a few)
_ANCHOR_WORDS: dict[int, tuple[tuple[Pattern, ...], AnchorWords]] = {}


_PRESENT = "klc.match: words present"
_FITTED = "klc.match: fixed statements fitted"


def _matches(pattern: Pattern, unit: Unit, rule: Rule | None = None,
             candidates: dict[str, list[Node]] | None = None) -> Iterator[Match]:
    if not possible(pattern, unit):
        return
    if candidates is None:
        candidates = index_nodes(unit, [pattern.root_type])
    m = _Matcher(unit.source, unit._kids)
    oblige = split_obligations if _obliges(pattern) else _no_obligations
    find = unit.source.find
    words = pattern.words
    statements = unit._statements
    # whether a fixed statement of a run fits one of a block's, by (statement, block): the
    # branches of an anchor (``decl_order``'s swapped pairs) share theirs
    fitted = unit.memo.get(_FITTED)
    if fitted is None:
        fitted = unit.memo[_FITTED] = {}
    root = pattern.elements[0]
    fast: Any = None
    done: set[int] = set()  # (the candidates matched as written: klc.match.reading)
    every = candidates.get(pattern.root_type, ())
    if words:  # (and the other tokens every spelling spells: ``for`` and ``int`` are in
        # every loop, ``<=`` or ``32`` in few)
        every = holding(unit, every, words, also=pattern.tokens)
    elif pattern.tokens and pattern.root_type != "compound_statement":
        # (only where a token is rare: asking each candidate costs more; a block's tokens
        # are in every block around it, which a run's candidates mostly are)
        every = holding(unit, every, pattern.tokens, rare=True)
    for node in every:
        if pattern.is_sequence:
            block = statements.get(node.id)
            if block is None:  # (shared by the runs of every rule: one list per block)
                kids = block_statements(node)
                block = statements[node.id] = (kids, [k.type for k in kids])
            kids, types = block
            held = True
            fits: dict[int, _Fits] = {}
            for e, shape in run_elements(pattern):
                # whether a statement of the block fits ``e`` (``_Fits``): the anchors whose
                # statements are ``e`` but for their metavariables' names share what is known
                key = (shape, node.id)
                got = fitted.get(key)
                if got is None:
                    got = fitted[key] = _Fits(m, e, kids, types, find)
                if got.first() is None:
                    held = False
                    break
                fits[id(e)] = got
            if not held:
                continue  # a statement of the run fits none of the block's
            # (a run of ``$$$`` ends only where the next statement fits)
            m.fitting = (kids, fits)
            start = fits.get(id(pattern.elements[0]))
            first = start.every() if start is not None else None
            fixed = pattern.elements[0].starts
            for j in range(len(kids)) if first is None else first:
                if fixed is not None and types[j] not in fixed:
                    continue  # a run must start with a potential kind of its first statement
                b: dict[str, Binding] = {}
                end = m.seq(pattern.elements, 0, kids, j, b, anchored=False)
                if end is None or end == j:
                    continue
                nodes = tuple(kids[j:end])
                done.add(node.id)
                yield Match(rule, unit, unit.function_at(nodes[0].start_byte),  # type: ignore[arg-type]
                            nodes[0].start_byte, nodes[-1].end_byte, nodes, b,
                            obligations=oblige(b))
            m.fitting = None  # (its fits hold the matcher: no cycle left to the collector)
        else:
            b = {}
            if fast is None:  # (``_Matcher.node``, called here without its indirection)
                fast = fast_of(root)
            if fast(node, b, m) if fast else m.generic(root, node, b):
                done.add(node.id)
                yield Match(rule, unit, unit.function_at(node.start_byte),  # type: ignore[arg-type]
                            node.start_byte, node.end_byte, (node,), b,
                            obligations=oblige(b))
    if pattern.reads:
        yield from read_matches(pattern, unit, rule, candidates.get(pattern.root_type, []), done)


def holding(unit: Unit, nodes: Sequence[Node], words: tuple[bytes, ...],
            rare: bool = False, also: tuple[bytes, ...] = ()) -> Sequence[Node]:
    """The nodes (in their order: the unit's document order) whose text holds every word: a
    match holds its anchor's words, so no other candidate can match. The candidates of a
    rare word are not looked at one by one: from each place the file spells the rarest word,
    the candidates holding it are the last one that starts before it and those around that
    one (``_nesting``: a tree's nodes nest or stand apart), and only they are asked for the
    other words. ``rare``: when no word is rarer than the nodes, the nodes as they are.
    ``also``: more text every candidate must hold, asked of each after the words (not
    counted in the file: a count of ``(`` reads the whole file for nothing). Kept in
    ``Unit.memo`` beside the list (the anchors of a library ask the same lists for the same
    words: a third of the questions are asked again), and so are the nodes around each
    rare word's places."""
    return _beside(unit.memo, (_HELD, id(nodes), words, also, rare), nodes,  # type: ignore[no-any-return]
                   lambda: _holding(unit, nodes, words, rare, also))


def _beside(memo: dict[Any, Any], key: tuple[Any, ...], nodes: Sequence[Node],
            make: Callable[[], Any]) -> Any:
    """What ``make`` gives for a list of nodes, kept in ``memo`` under ``key`` (which holds
    the list's id) beside the list itself: an id is not reused while the list is held."""
    held = memo.get(key)
    if held is not None and held[0] is nodes:
        return held[1]
    got = memo[key] = (nodes, make())
    return got[1]


def _holding(unit: Unit, nodes: Sequence[Node], words: tuple[bytes, ...], rare: bool,
             also: tuple[bytes, ...]) -> Sequence[Node]:
    find = unit.source.find
    counts = unit.memo.get(_COUNTS)
    if counts is None:
        counts = unit.memo[_COUNTS] = {}
    limit = len(nodes)
    rarest, fewest = words[0], limit
    longest = _LONGEST_FIRST.get(words)
    if longest is None:
        longest = _LONGEST_FIRST[words] = tuple(sorted(words, key=len, reverse=True))
    for w in longest:  # (the longest first, most often the rarest; each counted only as far
        # as the rarest before it: past that, how common it is does not matter)
        n = _count_below(unit.source, w, fewest, counts)
        if n < fewest:
            rarest, fewest = w, n
    nesting = _nesting(nodes, unit.memo) if fewest < limit else None
    if nesting is None and rare:
        return nodes
    if nesting is None:  # (a common word: each candidate looked at, its bytes searched)
        out = []
        every = words + also
        for node in nodes:
            s, e = node.start_byte, node.end_byte
            for w in every:
                if find(w, s, e) < 0:
                    break
            else:
                out.append(node)
        return out
    starts, ends = nesting[0], nesting[1]
    others = [w for w in words if w != rarest] + list(also)
    return [nodes[i] for i in _around_places(unit, nodes, nesting, rarest)
            if all(find(w, starts[i], ends[i]) >= 0 for w in others)]


# a list of words (an anchor's), the longest first
_LONGEST_FIRST: dict[tuple[bytes, ...], tuple[bytes, ...]] = {}


def _around_places(unit: Unit, nodes: Sequence[Node],
                   nesting: tuple[list[int], list[int], list[int]], word: bytes) -> list[int]:
    """The indices of the nodes (``_nesting``'s) whose text holds ``word``, in order: from
    each place the word stands, the last node that starts before it and those around that
    one. Kept in ``Unit.memo`` beside the list."""
    def make() -> list[int]:
        starts, ends, parents = nesting
        size = len(word)
        found: set[int] = set()
        for at in _places(unit, word):
            i = bisect.bisect_right(starts, at) - 1
            while i >= 0 and i not in found:  # (an index found has its enclosing ones found)
                if ends[i] >= at + size:
                    found.add(i)
                i = parents[i]
        return sorted(found)

    return _beside(unit.memo, (_AROUND, id(nodes), word), nodes, make)  # type: ignore[no-any-return]


def _count_below(source: bytes, word: bytes, limit: int, counts: dict[bytes, tuple[int, bool]]
                 ) -> int:
    """How many times ``word`` stands in ``source`` when fewer than ``limit``, else at least
    ``limit`` (``limit`` or more): the first ``limit`` places are looked for one by one where
    ``limit`` is small (a common word is found at once, where a count reads the whole file).
    Kept in ``counts``: the count, and whether it is exact."""
    held = counts.get(word)
    if held is not None and (held[1] or held[0] >= limit):
        return held[0]
    if limit > _FIND_LIMIT:
        n = source.count(word)
        counts[word] = (n, True)
        return n
    find, size, n = source.find, len(word) or 1, 0
    at = -size
    while n < limit:  # (apart, as ``bytes.count`` counts)
        at = find(word, at + size)
        if at < 0:
            counts[word] = (n, True)
            return n
        n += 1
    counts[word] = (n, False)
    return n


# (a list of candidates longer than this: the word is counted with ``bytes.count``)
_FIND_LIMIT = 16


def _places(unit: Unit, word: bytes) -> list[int]:
    """Every place ``word`` starts in the unit's bytes (those that overlap too), in order;
    kept in ``Unit.memo``."""
    key = (_PLACES, word)
    held = unit.memo.get(key)
    if held is None:
        find = unit.source.find
        held = []
        at = find(word)
        while at >= 0:
            held.append(at)
            at = find(word, at + 1)
        unit.memo[key] = held
    return held  # type: ignore[no-any-return]


def _nesting(nodes: Sequence[Node], memo: dict[Any, Any]
             ) -> tuple[list[int], list[int], list[int]] | None:
    """The starts and ends of a list of a tree's nodes in document order, and for each the
    index of the nearest one that holds it (-1 for none): nodes of a tree nest or stand
    apart, so those holding a node are a chain. Kept in ``memo`` beside the list (many
    anchors share their candidates); None when the list is not in document order."""
    return _beside(memo, (_NESTING, id(nodes)), nodes,  # type: ignore[no-any-return]
                   lambda: _nested(nodes))


def _nested(nodes: Sequence[Node]) -> tuple[list[int], list[int], list[int]] | None:
    starts = [n.start_byte for n in nodes]
    ends = [n.end_byte for n in nodes]
    parents = []
    stack: list[int] = []
    last = -1
    for i, (s, e) in enumerate(zip(starts, ends, strict=True)):
        if s < last:
            return None
        last = s
        while stack and ends[stack[-1]] < e:  # (one that ends before this one ends apart)
            stack.pop()
        parents.append(stack[-1] if stack else -1)
        stack.append(i)
    return starts, ends, parents


_COUNTS = "klc.match: word counts"
_PATH = "klc.match: the path down to a name"
_WON = "klc.match: a branch's match at a span"
_HELD = "klc.match: nodes holding words"
_AROUND = "klc.match: nodes around a word"
_PLACES = "klc.match: word places"
_NESTING = "klc.match: nesting"


class _Fits:
    """Which statements of a block a statement ``e`` of a run fits (``_Matcher.fits``): one of
    its kinds, holding every word of ``e`` (a match holds its words, as a candidate holds its
    anchor's), and fitting. Each statement is asked once, and only when needed: the first
    that fits (a run none fits is not looked for in the block), all of them (where the run
    may start), one (where a run of ``$$$`` before ``e`` may end: ``_Matcher.seq``)."""

    __slots__ = ("e", "find", "kids", "kinds", "m", "states", "types", "words")

    def __init__(self, m: _Matcher, e: PNode, kids: list[Node], types: list[str],
                 find: Callable[[bytes, int, int], int]) -> None:
        self.m, self.e, self.kids, self.types, self.find = m, e, kids, types, find
        self.kinds = e.starts if e.starts is not None else frozenset((e.type,))
        self.words = _element_words(e)
        self.states: list[bool | None] = [None] * len(kids)  # (None: not asked yet)

    def __call__(self, i: int) -> bool:
        held = self.states[i]
        if held is None:
            held = self.states[i] = self._ask(i)
        return held

    def _ask(self, i: int) -> bool:
        if self.types[i] not in self.kinds:
            return False
        k = self.kids[i]
        if self.words:
            find, s, end = self.find, k.start_byte, k.end_byte
            if any(find(w, s, end) < 0 for w in self.words):
                return False
        return self.m.fits(self.e, k)

    def first(self) -> int | None:
        kinds, states = self.kinds, self.states
        for i, t in enumerate(self.types):
            if t in kinds:
                held = states[i]
                if held is None:
                    held = states[i] = self._ask(i)
                if held:
                    return i
        return None

    def every(self) -> tuple[int, ...]:
        kinds = self.kinds
        return tuple(i for i, t in enumerate(self.types) if t in kinds and self(i))


# the statements of a run that each fit one statement of a block, with their fitting keys
# (``_fit_key``), by pattern key
_RUN_ELEMENTS: dict[str, tuple[Pattern, tuple[tuple[PNode, int], ...]]] = {}


def run_elements(pattern: Pattern) -> tuple[tuple[PNode, int], ...]:
    """The statements of a run that stand for one statement of a block each (not a
    metavariable, not ``$$$``; of a known kind, one spelling or several), in the order a
    block is asked for them: those with words first (a block without the words is passed
    over at once), the smallest first; each with its ``_fit_key``."""
    held = _RUN_ELEMENTS.get(pattern.key)
    if held is None or held[0] is not pattern:
        stand = [e for e in pattern.elements if e.metavar is None and e.seq is None
                 and (e.type or e.starts is not None)]
        held = _RUN_ELEMENTS[pattern.key] = (pattern, tuple((e, _fit_key(e)) for e in sorted(
            stand, key=lambda e: (not _element_words(e), _size(e)))))
    return held[1]


# the words of a run's fixed statements (``klc.match.pattern._words_of``), by the statement's
# id (the statement is kept beside them: an id is never reused while it is held)
_ELEMENT_WORDS: dict[int, tuple[PNode, tuple[bytes, ...]]] = {}
# the words and tokens of the nodes under those statements, by the node's id (each is held
# by a statement ``_ELEMENT_WORDS`` holds): the statements of a library's runs share many
# nodes (``klc.match.anchor.shared``), each read once
_WORDS_UNDER: dict[int, set[str]] = {}
_TOKENS_UNDER: dict[int, set[str]] = {}


def _element_words(e: PNode) -> tuple[bytes, ...]:
    """A run statement's words and tokens, none where a spelling of it is an early return
    (the words of what follows that ``if`` are not in the statement)."""
    held = _ELEMENT_WORDS.get(id(e))
    if held is None or held[0] is not e:
        held = _ELEMENT_WORDS[id(e)] = (e, () if any(a.type == EARLY for a in e.alts) else tuple(
            sorted(w.encode() for w in (_words_of(e, _WORDS_UNDER) | (
                _tokens_of(e, _TOKENS_UNDER) - _SPELLED_BY_MOST)))))
    return held[1]


def _fit_key(p: PNode) -> int:
    """A number for a pattern node, the same for nodes equal but for their metavariables'
    names (what ``_Matcher.fits`` reads of a run's statement: it binds nothing): the run
    statements of a library's anchors are fewer so. Numbered bottom up, each node once
    (an isomorphism's spellings share their parts), kept by the node's id beside it."""
    held = _FIT_KEYS.get(id(p))
    if held is None or held[0] is not p:
        tp = p.text_pattern
        shape = (p.type, p.text, p.metavar is not None, p.seq is not None, p.kinds,
                 (tp.pattern, tp.flags) if tp is not None else None,
                 tuple(map(_fit_key, p.children)), tuple(map(_fit_key, p.alts)), p.alt_checks)
        held = _FIT_KEYS[id(p)] = (p, _FIT_SHAPES.setdefault(shape, len(_FIT_SHAPES)))
    return held[1]


_FIT_KEYS: dict[int, tuple[PNode, int]] = {}
_FIT_SHAPES: dict[tuple[Any, ...], int] = {}


_OBLIGES: dict[str, bool] = {}


def _obliges(pattern: Pattern) -> bool:
    """Whether a match of the pattern can carry obligations: only a spelling with a check
    (``PNode.alt_checks``) makes them."""
    got = _OBLIGES.get(pattern.key)
    if got is None:
        seen: set[int] = set()

        def walk(p: PNode) -> bool:
            if id(p) in seen:
                return False
            seen.add(id(p))
            return any(c is not None for c in p.alt_checks) or any(
                walk(c) for c in (*p.children, *p.alts))

        got = _OBLIGES[pattern.key] = any(walk(e) for e in pattern.elements)
    return got


def _no_obligations(b: dict[str, Binding]) -> tuple[Binding, ...]:
    return ()
