"""The backtracking structural matcher (``_Matcher``): a compiled pattern against a node or a
run of a block's statements, bindings as byte spans."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from tree_sitter import Node

from klc.match.iso_checks import OBLIGATION, run_check
from klc.match.model import Binding
from klc.match.pattern import _IGNORED_TOKENS, EARLY, PNode
from klc.match.specialise import fast_of

# --------------------------------------------------------------------------------------
# Matching


def _significant(node: Node) -> list[Node]:
    return [c for c in node.children if c.type not in _IGNORED_TOKENS and not c.is_missing]


def block_statements(node: Node) -> list[Node]:
    """The statements of a block, where a run of statements (``$$$X``) is looked for: its
    significant children without the braces (a run that took in the ``{`` of a function
    body would have the rewrite replace it)."""
    return [c for c in node.children
            if c.type not in _BLOCK_TOKENS and not c.is_missing]


_BLOCK_TOKENS = _IGNORED_TOKENS | {"{", "}"}
# the kinds of code node that reading mode reads as something else (a local, a call statement)
_READ_AS = frozenset({"identifier", "expression_statement"})


class _Matcher:
    """Backtracking structural matcher over one unit's source (bindings are byte spans)."""

    def __init__(self, source: bytes, kids: dict[int, list[Node]] | None = None,
                 reader: Any = None):
        self.source = source
        # significant children by node id: a node is a candidate of many anchors, so the
        # unit keeps them (``Unit._kids``) for every matcher on it
        self.kids: dict[int, list[Node]] = {} if kids is None else kids
        # reading mode (``klc.match.reading``): a stable local's use read as its initialiser,
        # ``x = f(x);`` as the helper's statement (``inl``: the helper being read, whose
        # parameter stands for the call's variable); off unless ``reading`` is set
        self.reader = reader
        self.reading = False
        # in reading mode, whether locals and helpers are read through (off: the kids alone,
        # where a comparison tree-sitter misread is read again, are what reading mode reads)
        self.through = True
        self.inl: Any = None
        self.read_spans: list[tuple[int, int]] = []  # (what reading mode read: Match.reads)
        # where a run may end in a list of statements: the places of the next element's
        # kinds, by (list, kinds) (``kinds_at``)
        self.places: dict[tuple[int, int], tuple[list[Node], frozenset[str], list[int]]] = {}
        # of one list of statements (a run's block), whether each statement of the run fits
        # the statement at an index, by the run statement's id (``klc.match.find._Fits``): a
        # run of ``$$$`` ends only where the next statement fits
        self.fitting: tuple[list[Node], dict[int, Callable[[int], bool]]] | None = None

    def kinds_at(self, ts: list[Node], kinds: frozenset[str]) -> list[int]:
        """The indices of the nodes of ``ts`` whose type is one of ``kinds``, in order."""
        key = (id(ts), id(kinds))
        held = self.places.get(key)
        if held is None or held[0] is not ts or held[1] is not kinds:
            held = self.places[key] = (ts, kinds, [k for k, t in enumerate(ts)
                                                   if t.type in kinds])
        return held[2]

    def significant(self, t: Node) -> list[Node]:
        kids = self.kids.get(t.id)
        if kids is None:
            kids = self.kids[t.id] = _significant(t)
        return kids

    def text(self, start: int, end: int) -> str:
        return self.source[start:min(end, len(self.source))].decode("utf-8", "replace")

    def norm(self, start: int, end: int) -> str:
        return " ".join(self.text(start, end).split())

    def bind(self, name: str, start: int, end: int, nodes: tuple[Node, ...],
             b: dict[str, Binding]) -> bool:
        if name == "_":
            return True
        old = b.get(name)
        if old is not None:
            return self.same(old, start, end)
        # (the text is decoded when first read: most bindings of most trials never are)
        b[name] = Binding(name, start, end, None, nodes, self.source)
        return True

    def same(self, old: Binding, start: int, end: int) -> bool:
        """Whether the span [start, end) is the same code as an earlier binding (a repeated
        metavariable): the same bytes, else equal but for whitespace and comments."""
        src = self.source
        if old._source is src and src[old.start:old.end] == src[start:end]:
            return True  # (an undecoded span of this source: compared as bytes)
        text = self.text(start, end)
        inl = self.inl
        if inl is not None and inl.stmt.start_byte <= start and end <= inl.stmt.end_byte:
            # (inside a helper read in place of its call: its parameter is the caller's
            # variable)
            text = re.sub(rf"(?<![\w.>]){re.escape(inl.param.decode())}(?!\w)",
                          inl.arg.decode(), text)
        if old.text == text or _same_code(old.text, text):
            return True
        if self.reading and self.through and inl is None:
            # (reading mode: the same value once stable locals are read as their values)
            mine = self.reader.read_text(start, end)
            return mine is not None and mine == self.reader.read_text(old.start, old.end)
        return False

    def node(self, p: PNode, t: Node, b: dict[str, Binding]) -> bool:
        """Whether ``p`` matches ``t``, binding its metavariables into ``b``: by the code
        made for ``p`` where there is some (``klc.match.specialise``, made once ``p`` is tried
        often), else by ``generic``."""
        if self.reading:
            trial = dict(b)
            if self.generic(p, t, trial):
                b.update(trial)
                return True
            return self.read(p, t, b)
        fast = p.fast
        if fast is None:
            fast = fast_of(p)
        if fast:  # (False: no code for ``p``; None: not tried often enough yet)
            return fast(t, b, self)  # type: ignore[no-any-return]
        return self.generic(p, t, b)

    def read(self, p: PNode, t: Node, b: dict[str, Binding]) -> bool:
        """Reading mode: ``p`` against what ``t`` stands for: a stable local's initialiser
        where ``p`` is an expression with parts, a helper's statement where ``t`` is ``x =
        f(x);`` and ``p`` another statement (``klc.match.reading``)."""
        if not self.through or p.alts or p.metavar is not None or not p.children \
                or p.type == t.type:
            return False
        if t.type == "identifier":
            value = self.reader.local_value(t)
            if value is None:
                return False
            self.read_spans.append((value.start_byte, value.end_byte))
            return self.node(p, value, b)
        if t.type != "expression_statement" or self.inl is not None:
            return False
        inl = self.reader.inlined(t)
        if inl is None:
            return False
        before = set(b)
        self.read_spans.append((inl.helper.node.start_byte, inl.helper.node.end_byte))
        self.inl = inl
        try:
            ok = self.node(p, inl.stmt, b)
        finally:
            self.inl = None
        if not ok:
            return False
        lo, hi = inl.helper.node.start_byte, inl.helper.node.end_byte
        arg = inl.arg_node
        for name, got in list(b.items()):
            if name in before or name.startswith(OBLIGATION) or not (
                    lo <= got.start and got.end <= hi):
                continue
            if self.source[got.start:got.end] == inl.param:
                # the parameter itself stands for the caller's variable: bound to it
                b[name] = Binding(name, arg.start_byte, arg.end_byte, None, (arg,),
                                  self.source)
            elif self.reader.foreign_names((got.start, got.end), inl):
                return False  # (a binding that names the helper's parameter or another name)
        return True

    def generic(self, p: PNode, t: Node, b: dict[str, Binding]) -> bool:
        if p.alts:
            return self.alt(p, t, b)
        name = p.metavar
        if name is not None:
            if p.type == "statement" and not t.type.endswith("statement") \
                    and t.type not in ("declaration", "compound_statement"):
                return False
            if p.kinds is not None and t.type not in p.kinds:
                return False
            if name == "_":
                return True
            start, end = t.start_byte, t.end_byte
            old = b.get(name)
            if old is not None:
                return self.same(old, start, end)
            b[name] = Binding(name, start, end, None, (t,), self.source)
            return True
        if p.type != t.type:
            return False
        if not p.children:
            if t.child_count and _significant(t):
                return False
            if p.text_pattern is not None:
                return self.text_leaf(p, t, b)
            raw = self.source[t.start_byte:t.end_byte]
            if raw == p.raw:
                return True
            return p.text == " ".join(raw.decode("utf-8", "replace").split())
        if p.plain:
            # one to one: b is the caller's scratch copy, so a failure may leave it dirty
            count = t.child_count
            if count < len(p.children):
                return False  # fewer children, so fewer significant ones
            reading = self.reading
            if count == len(p.children) and not reading:
                # the kinds at the fixed places, one child at a time (no list of them all):
                # when an ignored token is among the children, the counts differ below
                child = t.child
                for i, type_ in p.shape:
                    if child(i).type != type_:  # type: ignore[union-attr]
                        return False
            kids = self.significant(t)
            if len(kids) != len(p.children):
                return False
            if reading:  # (what a child stands for is read below: the shapes it may take)
                for i, type_ in p.shape:
                    if kids[i].type != type_ and kids[i].type not in _READ_AS:
                        return False
            elif count != len(p.children):  # (else the kinds were checked above)
                for i, type_ in p.shape:
                    if kids[i].type != type_:
                        return False
            # the children in ``plan`` order; tokens and metavariables inline (as ``node``
            # would do them: their kinds were checked above), the rest by recursion
            src = self.source
            for i, how, pc in p.plan:
                k = kids[i]
                if how == 1:
                    name = pc.metavar
                    if pc.type == "statement" and not k.type.endswith("statement") \
                            and k.type not in ("declaration", "compound_statement"):
                        return False
                    if pc.kinds is not None and k.type not in pc.kinds:
                        return False
                    if name == "_":
                        continue
                    start, end = k.start_byte, k.end_byte
                    old = b.get(name)
                    if old is None:
                        b[name] = Binding(name, start, end, None, (k,), src)  # type: ignore[arg-type]
                    elif not self.same(old, start, end):
                        return False
                elif how == 0:
                    if k.child_count and _significant(k):
                        return False
                    raw = src[k.start_byte:k.end_byte]
                    if raw != pc.raw and pc.text != " ".join(
                            raw.decode("utf-8", "replace").split()):
                        return False
                elif not self.node(pc, k, b):
                    return False
            return True
        return self.seq(p.children, 0, self.significant(t), 0, b, anchored=True) is not None

    def alt(self, p: PNode, t: Node, b: dict[str, Binding]) -> bool:
        """An isomorphism's alternation (``klc.match.iso``): the first spelling that matches
        ``t`` and whose check holds on it. An obligation the check makes (a type that only
        the declarations can tell) goes into the bindings under a name no metavariable has
        (``iso.OBLIGATION``); ``find_matches`` moves it to ``Match.obligations``."""
        kind = None if self.reading else t.type  # (reading mode reads ``t`` as other kinds)
        for a, check in zip(p.alts, p.alt_checks, strict=True):
            if a.type == EARLY:
                continue  # (a run's last statements, not one node: ``seq`` tries it)
            starts = a.starts
            if kind is not None and starts is not None and kind not in starts:
                continue  # (``node`` would refuse ``t`` at once: not a kind ``a`` matches)
            trial = dict(b)
            if not self.node(a, t, trial):
                continue
            if check is not None:
                held = run_check(check, t)
                if held is False:
                    continue
                if held is not True and not self._oblige(held, trial):
                    continue
            b.update(trial)
            return True
        return False

    def _oblige(self, held: list[tuple[str, Node]], trial: dict[str, Binding]) -> bool:
        """Record an alternative's obligations; ``$$$X`` binds the run X to nothing before
        the node (false when X is bound to something already)."""
        for kind, n in held:
            if kind.startswith("$$$"):
                if not self.bind(kind[3:], n.start_byte, n.start_byte, (), trial):
                    return False
                continue
            trial[f"{OBLIGATION}{kind}@{n.start_byte}"] = Binding(
                kind, n.start_byte, n.end_byte, None, (n,), self.source)
        return True

    def fits(self, p: PNode, t: Node) -> bool:
        """Whether ``p`` could match ``t`` under some bindings: ``node`` without the
        metavariables' equalities, trying every split of a ``$$$`` run. A match under any
        bindings fits, so a node that does not fit is rejected without binding anything."""
        if p.alts:  # (the early return spelling: its ``if`` is the node, the rest follows)
            return any(self.fits(a, t) if a.type != EARLY else
                       not a.children or self.fits(a.children[0], t) for a in p.alts)
        if p.metavar is not None:
            if p.kinds is not None and t.type not in p.kinds:
                return False
            return p.type != "statement" or t.type.endswith("statement") \
                or t.type in ("declaration", "compound_statement")
        if p.type != t.type:
            if self.reading and self.through and p.children and t.type in _READ_AS:
                seen = self.reader.local_value(t) if t.type == "identifier" \
                    else self.reader.inlined(t)
                seen = getattr(seen, "stmt", seen)
                return seen is not None and seen.type == p.type and self.fits(p, seen)
            return False
        if not p.children:
            if t.child_count and _significant(t):
                return False
            if p.text_pattern is not None:
                return p.text_pattern.match(self.text(t.start_byte, t.end_byte).strip()) \
                    is not None
            raw = self.source[t.start_byte:t.end_byte]
            return raw == p.raw or p.text == " ".join(raw.decode("utf-8", "replace").split())
        kids = self.significant(t)
        if p.plain:
            if len(kids) != len(p.children):
                return False
            for i, type_ in p.shape:
                if kids[i].type != type_ and not (self.reading and kids[i].type in _READ_AS):
                    return False
            fits = self.fits
            pcs = p.children
            return all(fits(pcs[i], kids[i]) for i in p.order)
        return self._fits_run(p.children, 0, kids, 0)

    def _fits_run(self, ps: tuple[PNode, ...], i: int, ts: list[Node], j: int) -> bool:
        if i == len(ps):
            return j == len(ts)
        p = ps[i]
        if p.seq is not None:
            return any(self._fits_run(ps, i + 1, ts, k) for k in range(j, len(ts) + 1))
        return j < len(ts) and self.fits(p, ts[j]) and self._fits_run(ps, i + 1, ts, j + 1)

    def text_leaf(self, p: PNode, t: Node, b: dict[str, Binding]) -> bool:
        raw = self.text(t.start_byte, t.end_byte)
        lead = len(raw) - len(raw.lstrip())
        m = p.text_pattern.match(raw.strip()) if p.text_pattern else None
        if m is None:
            return False
        base = t.start_byte + len(raw[:lead].encode())
        stripped = raw.strip()
        for i, name in enumerate(p.text_vars, start=1):
            s = base + len(stripped[:m.start(i)].encode())
            e = base + len(stripped[:m.end(i)].encode())
            if not self.bind(name, s, e, (), b):
                return False
        return True

    def dots_span(self, after: int, before: int) -> tuple[int, int]:
        """What statement dots skipped between two matched nodes: every byte between them
        (comments too, so that a rewrite writes them back) but the blank around, and a
        comment that ends the line of the node before (it stays with that node)."""
        src = self.source
        start = after
        while start < before and src[start] in b" \t":
            start += 1
        if src.startswith(b"//", start) or src.startswith(b"/*", start):
            eol = src.find(b"\n", start, before)
            start = before if eol < 0 else eol
        while start < before and src[start] in b" \t\r\n":
            start += 1
        end = before
        while end > start and src[end - 1] in b" \t\r\n":
            end -= 1
        return start, end

    def seq(self, ps: tuple[PNode, ...], i: int, ts: list[Node], j: int,
            b: dict[str, Binding], anchored: bool) -> int | None:
        """Match ps[i:] against ts[j:]; return the index in ts after the match, or None.

        ``anchored`` requires the whole of ts to be used (children of one node); a run of
        statements is matched unanchored at its end (the match may stop before the block
        does), except that a ``$$$X`` run ending the pattern takes the rest of the block.
        """
        if i == len(ps):
            return j if (j == len(ts) or not anchored) else None
        p = ps[i]
        if p.seq is not None:
            nxt = ps[i + 1] if i + 1 < len(ps) else None
            # the run ends where the next element can match: a node of its potential kinds
            # that holds the code of the metavariables it repeats (``_holds_bound``)
            fixed = nxt.starts if nxt is not None else None
            repeats = _repeated(nxt) if fixed is not None else ()
            repeats = tuple(x for x in map(b.get, repeats) if x is not None) if repeats else ()
            n = len(ts)
            # (statement dots skip as little as they can: the shortest run first; a run that
            # ends the pattern takes the rest of the block, as one in a block does)
            longest = (anchored or i + 1 == len(ps)) and p.dots is None
            fitting = self.fitting
            fits = fitting[1].get(id(nxt)) if fitting is not None and fitting[0] is ts \
                else None
            # (and the statements after it, up to the next run: each stands for the next
            # statement of the block, so each must fit there too)
            after = _fixed_after(ps, i + 2, fitting[1]) if fits is not None else ()
            if fixed is not None:  # (only where the next element's kinds stand)
                at = self.kinds_at(ts, fixed)
                ends: Any = at[bisect_left(at, j):]
                if longest:
                    ends.reverse()
            else:
                ends = range(n, j - 1, -1) if longest else range(j, n + 1)
            for k in ends:
                if fits is not None and (k >= n or not fits(k)):
                    continue  # (the next statement cannot match there)
                if after and any(k + d >= n or not f(k + d) for d, f in after):
                    continue  # (nor one of those after it)
                if repeats and not self._holds_bound(repeats, ts[k]):
                    continue
                trial = dict(b)
                if p.dots is not None and j > 0 and k < n:
                    start, end = self.dots_span(ts[j - 1].end_byte, ts[k].start_byte)
                    ok = self.bind(p.seq, start, end, tuple(ts[j:k]), trial)
                elif k > j:
                    ok = self.bind(p.seq, ts[j].start_byte, ts[k - 1].end_byte,
                                   tuple(ts[j:k]), trial)
                else:
                    start = ts[j].start_byte if j < len(ts) else (
                        ts[-1].end_byte if ts else 0)
                    ok = self.bind(p.seq, start, start, (), trial)
                if not ok:
                    continue
                end = self.seq(ps, i + 1, ts, k, trial, anchored)
                if end is not None:
                    b.clear()
                    b.update(trial)
                    return end
            return None
        if j >= len(ts):
            return None
        trial = dict(b)
        if not self.node(p, ts[j], trial):
            if p.alts and p.alts[-1].type == EARLY and i + 1 == len(ps):
                return self.early_return(p, ts, j, b)
            return None
        end = self.seq(ps, i + 1, ts, j + 1, trial, anchored)
        if end is not None:
            b.clear()
            b.update(trial)
        return end

    def _holds_bound(self, bound: tuple[Binding, ...], t: Node) -> bool:
        """False when the code of a binding that is one word (an identifier, a number) is
        nowhere in ``t``: a node where that metavariable stands again must repeat it (the same
        bytes, or equal but for blanks and comments, which a word cannot hold)."""
        src = self.source
        for x in bound:
            word = src[x.start:x.end]
            if not word or _WORDY.fullmatch(word) is None:
                continue
            if x._source is not src and (x._text is None or x._text != word.decode(
                    "utf-8", "replace")):
                continue  # (a binding made on other code)
            if src.find(word, t.start_byte, t.end_byte) < 0:
                return False
        return True

    def early_return(self, p: PNode, ts: list[Node], j: int, b: dict[str, Binding]) -> int | None:
        """The isomorphism ``early_return`` (``klc.match.iso``): a run's last statement
        ``if (C) { $$$BODY; }`` as ``if (!C) return;`` and the rest of a kernel's body,
        bound to ``$$$BODY``: the same code only when nothing follows in the function."""
        early = p.alts[-1]
        t = ts[j]
        block = t.parent
        if block is None or block.parent is None or block.parent.type != "function_definition":
            return None
        trial = dict(b)
        if not self.node(early.children[0], t, trial):
            return None
        held = run_check("int_operands", t)
        if held is False or (held is not True and not self._oblige(held, trial)):
            return None
        rest = ts[j + 1:]
        if early.text is None:  # (a whole body: ``iso.single_early_return``)
            if self.seq(early.children[1:], 0, rest, 0, trial, anchored=True) is None:
                return None
            b.clear()
            b.update(trial)
            return len(ts)
        fixed = early.children[1:]  # the body's statements after its run (none: all of it)
        if len(fixed) > len(rest):
            return None
        if fixed:
            rest, tail = rest[:len(rest) - len(fixed)], rest[len(rest) - len(fixed):]
            if not all(self.node(pf, tn, trial) for pf, tn in zip(fixed, tail, strict=True)):
                return None
            start = rest[0].start_byte if rest else tail[0].start_byte
        else:
            start = rest[0].start_byte if rest else t.end_byte
        if not self.bind(early.text or "_", start, rest[-1].end_byte if rest else start,
                         tuple(rest), trial):
            return None
        b.clear()
        b.update(trial)
        return len(ts)


_WORDY = re.compile(rb"[A-Za-z0-9_$]+")

# the metavariables a match of a pattern node compares inside the matched node, by the node's
# id (the node kept beside them)
_REPEATED: dict[int, tuple[PNode, tuple[str, ...]]] = {}


def _repeated(p: PNode) -> tuple[str, ...]:
    """The names of the one-node metavariables (``$X``, not runs nor text fragments) that
    every way of matching ``p`` against a node binds or compares inside that node: under an
    alternation, those all its spellings hold (of the ``early_return`` spelling, those of
    the ``if`` it matches the node against: the rest of the block is outside the node)."""
    held = _REPEATED.get(id(p))
    if held is None or held[0] is not p:
        held = _REPEATED[id(p)] = (p, tuple(sorted(_inside(p))))
    return held[1]


def _inside(p: PNode) -> set[str]:
    if p.alts:
        return set.intersection(*(
            (_inside(a.children[0]) if a.children else set()) if a.type == EARLY
            else _inside(a) for a in p.alts))
    names = {p.metavar} if p.metavar is not None and p.metavar != "_" else set()
    for c in p.children:
        names |= _inside(c)
    return names


def _same_code(a: str, b: str) -> bool:
    """Equal as code: whitespace and comments do not matter."""
    strip = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
    return "".join(strip.sub(" ", a).split()) == "".join(strip.sub(" ", b).split())


def _fixed_after(ps: tuple[PNode, ...], i: int, fits: dict[int, Callable[[int], bool]]
                 ) -> tuple[tuple[int, Callable[[int], bool]], ...]:
    """The statements ``ps[i:]`` before the next run of ``$$$`` that each stand for one
    statement of a block, with what says whether one fits a block's statement (``fits``, by
    element), each with its distance from the statement before them (1, 2, ...): where a run
    ends at statement k, the one d after k must fit. Stops at the first element without a
    fit (a metavariable statement, a spelling that takes the rest of the block)."""
    out = []
    for d, p in enumerate(ps[i:], start=1):
        f = fits.get(id(p)) if p.seq is None else None
        if f is None:
            break
        out.append((d, f))
    return tuple(out)
