"""The matcher: a compiled anchor pattern against a unit's tree -> matches with bindings."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from tree_sitter import Node

from klc.cuda.syntax import F_BODY, F_DECLARATOR, F_VALUE, SQUEEZED_OUT, parser
from klc.errors import KlcError
from klc.rule.model import METAVAR_KINDS

if TYPE_CHECKING:
    from klc.cuda.model import Function, Unit
    from klc.rule import Rule


class Binding:
    """What a metavariable bound: one node (``$X``), a run of sibling nodes (``$$$X``), or a
    fragment of a token's text (a metavariable inside a ``#pragma`` line).

    Immutable by convention, compared and hashed by (name, span, text), not by its nodes. A
    plain class with slots: the matcher makes one per metavariable of every match, and a
    frozen dataclass costs four times as much to build."""

    __slots__ = ("_source", "_text", "end", "name", "nodes", "start")

    def __init__(self, name: str, start: int, end: int, text: str | None,
                 nodes: tuple[Node, ...] = (), source: bytes | None = None) -> None:
        self.name = name
        self.start = start
        self.end = end
        # the original source text of the span; the matcher gives the source instead, and
        # the text is decoded on first use (most bindings of most matches are never read)
        self._text = text
        self._source = source
        self.nodes = nodes

    @property
    def text(self) -> str:
        text = self._text
        if text is None:
            text = self._text = self._source[self.start:self.end].decode(  # type: ignore[index]
                "utf-8", "replace")
            self._source = None
        return text

    def _key(self) -> tuple[str, int, int, str]:
        return (self.name, self.start, self.end, self.text)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Binding:
            return NotImplemented
        return self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"Binding(name={self.name!r}, start={self.start!r}, end={self.end!r}, "
                f"text={self.text!r})")

    @property
    def node(self) -> Node | None:
        return self.nodes[0] if len(self.nodes) == 1 else None


@dataclass
class Match:
    """One place where a rule's anchor matched."""

    rule: Rule
    unit: Unit
    function: Function | None  # the enclosing function, if any
    start: int  # byte span of the whole match in unit.source
    end: int
    nodes: tuple[Node, ...]  # the matched node(s): one, or a run of sibling statements
    bindings: dict[str, Binding]
    # the sub-matches of the rule's ``rewrite within`` edits (klc.edits.within.SubResult), set
    # when its guards are judged
    subs: object | None = None

    @property
    def line_col(self) -> tuple[int, int]:
        return self.unit.position(self.start)


# --------------------------------------------------------------------------------------
# Compiled patterns

_METAVAR_RE = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_]*)$")
_SEQ_RE = re.compile(r"^\$\$\$([A-Za-z_][A-Za-z0-9_]*)$")
_TEXT_METAVAR_RE = re.compile(r"\$\$\$([A-Za-z_]\w*)|\$([A-Za-z_]\w*)")
_IDENT_TYPES = frozenset({"identifier", "type_identifier", "field_identifier",
                          "statement_identifier", "namespace_identifier"})
# Punctuation that structure already implies: ignoring it lets `for ($I; $C; $U)` match a
# for loop whose initializer is a declaration (which owns its ";" in the grammar).
_IGNORED_TOKENS = frozenset({";", ",", "comment"})
_WORD_RE = re.compile(r"[A-Za-z_]\w{2,}")
_WRAP_BODY = "void __klc_anchor__() {\n"
_WRAP_EXPR = "void __klc_anchor__() {\nauto __klc_e__ = (\n"


@dataclass(frozen=True)
class PNode:
    """A pattern node: a kind to match, a metavariable, or a token to compare by text."""

    type: str
    text: str | None = None  # leaves: the token text (whitespace-normalised)
    children: tuple[PNode, ...] = ()
    metavar: str | None = None  # "$X": binds any one node ("_" binds nothing)
    seq: str | None = None  # "$$$X": binds a run of sibling nodes
    text_pattern: re.Pattern[str] | None = None  # a leaf whose text holds metavariables
    text_vars: tuple[str, ...] = ()
    # a metavariable's kind (``metavar $X: identifier``): the node types it may bind
    kinds: frozenset[str] | None = None
    # derived, for speed: no "$$$" among the children (they then match one to one), and the
    # leaf text as bytes (compared with the source before any normalising)
    plain: bool = field(init=False, compare=False, repr=False)
    raw: bytes | None = field(init=False, compare=False, repr=False)
    order: tuple[int, ...] = field(init=False, compare=False, repr=False)
    # (index, type) of the children that are not metavariables: checked on the target's
    # children before any recursion or binding (most candidates fail there, cheaply)
    shape: tuple[tuple[int, str], ...] = field(init=False, compare=False, repr=False)
    # the one-to-one children in ``order``, each (index, how, child): how 0 a token compared
    # by text, 1 a metavariable, 2 anything else (matched by recursion)
    plan: tuple[tuple[int, int, PNode], ...] = field(init=False, compare=False, repr=False)
    # the node's matcher as Python code made for it (``_specialise``), on first use; False
    # when the generic ``_Matcher.node`` does it (a leaf, a metavariable, a ``$$$`` run)
    fast: Any = field(default=None, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "plain", all(c.seq is None for c in self.children))
        # one-to-one children are tried cheapest first: tokens (an operator, a keyword), then
        # structure, then metavariables (a binding costs most, and is wasted on a miss)
        object.__setattr__(self, "order", tuple(sorted(
            range(len(self.children)),
            key=lambda i: (0 if self.children[i].raw is not None else
                           2 if self.children[i].metavar is not None else 1, i))))
        object.__setattr__(self, "raw", self.text.encode() if self.text is not None
                           and self.text_pattern is None else None)
        object.__setattr__(self, "shape", tuple(
            (i, c.type if c.metavar is None else next(iter(c.kinds)))  # type: ignore[arg-type]
            for i, c in enumerate(self.children)
            if c.seq is None and (c.metavar is None or (c.kinds is not None
                                                        and len(c.kinds) == 1))))
        object.__setattr__(self, "plan", tuple(
            (i, 1 if c.metavar is not None else
             0 if not c.children and c.raw is not None and c.seq is None else 2, c)
            for i, c in ((i, self.children[i]) for i in self.order)))


@dataclass(frozen=True)
class Pattern:
    """An anchor compiled once: what to look for, and how to find candidates quickly."""

    code: str
    elements: tuple[PNode, ...]  # one node, or a run of statements (a sequence anchor)
    is_sequence: bool
    root_type: str  # the node type candidates are found by ("compound_statement" for runs)
    words: tuple[bytes, ...]  # identifiers the file must contain for a match to be possible
    # a run's statements that are not metavariables, smallest first: a block holds a match
    # only if each fits one of its statements (``_Matcher.fits``)
    fixed: tuple[PNode, ...] = ()
    key: str = ""  # the code and the metavariables' kinds: equal keys match alike
    # runs of the anchor's tokens with no metavariable between them, squeezed as the unit's
    # text is (``Unit.squeezed``): a match needs every run somewhere (``_token_runs``)
    runs: tuple[bytes, ...] = ()

    def __post_init__(self) -> None:
        if not self.key:
            object.__setattr__(self, "key", self.code)


# The kinds a metavariable can be declared to have (``metavar $X: identifier, pointer``), as
# the node types it may then bind: like Coccinelle's typed metavariables and ast-grep's
# `kind` constraints, a match whose binding has another kind is no match at all. A kind
# mapped to None is a type, not a node type (``pointer``: a pointer or an array; ``scalar``:
# an arithmetic value): klc.pipeline checks it on the match, from the declarations, and a
# binding whose type is not known is no match either (a pointer rule never binds a scalar).
# (METAVAR_KINDS, TYPE_KINDS: the rule language's vocabulary, in klc.rule.model.)


def compile_pattern(code: str, where_: str = "<anchor>",
                    kinds: tuple[tuple[str, str], ...] = ()) -> Pattern:
    """Parse an anchor with tree-sitter-cuda and turn it into a pattern (see module doc).
    ``kinds``: (metavariable, kind in METAVAR_KINDS) pairs that constrain what it binds."""
    pattern = _compile_pattern(code, where_)
    if not kinds:
        return pattern
    allowed: dict[str, frozenset[str]] = {}
    for name, kind in kinds:
        types = METAVAR_KINDS[kind]
        if types is not None:
            allowed[name] = allowed[name] & types if name in allowed else types
    if not allowed:
        return pattern

    def typed(p: PNode) -> PNode:
        if p.metavar is not None and p.metavar in allowed:
            return replace(p, kinds=allowed[p.metavar])
        if not p.children:
            return p
        return replace(p, children=tuple(typed(c) for c in p.children))

    elements = tuple(typed(e) for e in pattern.elements)
    fixed = tuple(typed(e) for e in pattern.fixed)
    key = pattern.code + "".join(f"\0${n}:{k}" for n, k in sorted(kinds))
    return replace(pattern, elements=elements, fixed=fixed, key=key)


def _compile_pattern(code: str, where_: str) -> Pattern:
    attempts = (
        (_WRAP_BODY, "\n}\n", "body"),
        (_WRAP_EXPR, "\n);\n}\n", "expr"),
        ("", "\n", "top"),
    )
    for prefix, suffix, how in attempts:
        tree = parser().parse((prefix + code + suffix).encode())
        if _has_real_error(tree.root_node):
            continue
        nodes = _pattern_nodes(tree.root_node, how)
        if nodes is None:
            continue
        source = (prefix + code + suffix).encode()
        elements = tuple(_to_pnode(n, source) for n in nodes)
        if not elements:
            break
        return _make_pattern(code, elements, where_)
    raise KlcError(f"{where_}: the anchor does not parse as CUDA code")


def _has_real_error(node: Node) -> bool:
    """An ERROR node, or a MISSING node other than a ";" after a statement metavariable."""
    if not node.has_error:
        return False
    if node.type == "ERROR":
        return True
    if node.is_missing:
        return True
    if node.type == "expression_statement":
        named = [c for c in node.children if c.type != "comment"]
        if (len(named) == 2 and named[0].type == "identifier" and named[1].is_missing
                and _METAVAR_RE.match(named[0].text.decode() if named[0].text else "")):
            return False
    return any(_has_real_error(c) for c in node.children)


def _pattern_nodes(root: Node, how: str) -> list[Node] | None:
    if how == "top":
        return [c for c in root.children if c.type != "comment"]
    fn = root.children[0] if root.children else None
    body = fn.child_by_field_id(F_BODY) if fn is not None else None
    if body is None:
        return None
    stmts = [c for c in body.named_children if c.type != "comment"]
    if how == "body":
        return stmts
    decl = stmts[0] if stmts else None
    init = decl.child_by_field_id(F_DECLARATOR) if decl is not None else None
    value = init.child_by_field_id(F_VALUE) if init is not None else None
    if value is None or value.type != "parenthesized_expression":
        return None
    inner = [c for c in value.named_children if c.type != "comment"]
    return inner if len(inner) == 1 else None


def _to_pnode(node: Node, source: bytes) -> PNode:
    text = source[node.start_byte:node.end_byte].decode()
    if node.type in _IDENT_TYPES:
        if m := _SEQ_RE.match(text):
            return PNode(node.type, seq=m.group(1))
        if m := _METAVAR_RE.match(text):
            return PNode(node.type, metavar=m.group(1))
    if node.type == "expression_statement":
        kids = [c for c in node.children if c.type not in _IGNORED_TOKENS and not c.is_missing]
        if len(kids) == 1 and kids[0].type == "identifier":
            t = source[kids[0].start_byte:kids[0].end_byte].decode()
            if m := _SEQ_RE.match(t):
                return PNode("statement", seq=m.group(1))
            if m := _METAVAR_RE.match(t):
                return PNode("statement", metavar=m.group(1))
    if node.type not in ("translation_unit", "compound_statement"):
        # a wrapper whose whole text is a metavariable (`$$$PARAMS` parses as a
        # parameter_declaration of type `$$$PARAMS`): the metavariable stands for the wrapper
        whole = text.strip()
        if m := _SEQ_RE.match(whole):
            return PNode(node.type, seq=m.group(1))
        if m := _METAVAR_RE.match(whole):
            return PNode(node.type, metavar=m.group(1))
    kids = [c for c in node.children if c.type not in _IGNORED_TOKENS and not c.is_missing]
    if not kids:
        norm = " ".join(text.split())
        if "$" in norm:
            return _text_pattern_node(node.type, norm)
        return PNode(node.type, text=norm)
    return PNode(node.type, children=tuple(_to_pnode(c, source) for c in kids))


def _text_pattern_node(type_: str, text: str) -> PNode:
    """A token with metavariables in its text (``unroll $N`` in a pragma): match by regex."""
    parts, names, pos = [], [], 0
    for m in _TEXT_METAVAR_RE.finditer(text):
        parts.append(r"\s*".join(re.escape(w) for w in text[pos:m.start()].split(" ")))
        name = m.group(1) or m.group(2)
        parts.append(r"(.*?)" if m.group(1) else r"(\S+?)")
        names.append(name)
        pos = m.end()
    parts.append(r"\s*".join(re.escape(w) for w in text[pos:].split(" ")))
    return PNode(type_, text=text, text_pattern=re.compile("^" + "".join(parts) + "$", re.S),
                 text_vars=tuple(names))


def _make_pattern(code: str, elements: tuple[PNode, ...], where_: str) -> Pattern:
    if len(elements) == 1 and (elements[0].metavar or elements[0].seq):
        raise KlcError(f"{where_}: the anchor is a lone metavariable and would match anything")
    words: set[str] = set()

    def collect(p: PNode) -> None:
        if p.text and not p.metavar and not p.seq and p.text_pattern is None:
            words.update(_WORD_RE.findall(p.text))
        for c in p.children:
            collect(c)

    for e in elements:
        collect(e)
    is_sequence = len(elements) > 1
    root_type = "compound_statement" if is_sequence else elements[0].type
    fixed = tuple(sorted((e for e in elements if e.metavar is None and e.seq is None),
                         key=_size)) if is_sequence else ()
    return Pattern(code, elements, is_sequence, root_type,
                   tuple(sorted(w.encode() for w in words)), fixed, runs=_token_runs(elements))


_PLAIN_TOKEN_RE = re.compile(r"^[^\s$]+$")


def _token_runs(elements: tuple[PNode, ...]) -> tuple[bytes, ...]:
    """The anchor's runs of two or more tokens that stand next to each other (no
    metavariable between them), each squeezed as ``Unit.squeezed`` squeezes a file: the
    tokens joined, without the punctuation the matcher ignores. Between two consecutive
    tokens of a match there is only what the matcher skips (whitespace, masked text, a
    comment, a line continuation, that punctuation), which the squeeze removes: a file whose
    squeezed text lacks a run holds no match, and is rejected before any candidate. A token
    the matcher compares loosely (with whitespace or a comment in it, or a metavariable)
    ends a run."""
    runs: list[list[bytes]] = [[]]

    def walk(p: PNode) -> None:
        if p.metavar is not None or p.seq is not None or p.text_pattern is not None:
            runs.append([])
            return
        if not p.children:
            text = p.text or ""
            if _PLAIN_TOKEN_RE.match(text) and "//" not in text and "/*" not in text \
                    and "\\" not in text:
                runs[-1].append(text.encode())
            else:
                runs.append([])
            return
        for c in p.children:
            walk(c)

    for e in elements:
        walk(e)
    squeezed = {b"".join(r).translate(None, SQUEEZED_OUT) for r in runs if len(r) >= 2}
    # the longest first (the likeliest to be missing)
    return tuple(sorted((r for r in squeezed if r), key=lambda r: (-len(r), r)))


def _size(p: PNode) -> int:
    return 1 + sum(_size(c) for c in p.children)


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


class _Matcher:
    """Backtracking structural matcher over one unit's source (bindings are byte spans)."""

    def __init__(self, source: bytes, kids: dict[int, list[Node]] | None = None):
        self.source = source
        # significant children by node id: a node is a candidate of many anchors, so the
        # unit keeps them (``Unit._kids``) for every matcher on it
        self.kids: dict[int, list[Node]] = {} if kids is None else kids

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
        text = self.text(start, end)
        old = b.get(name)
        if old is not None:
            return old.text == text or _same_code(old.text, text)
        b[name] = Binding(name, start, end, text, nodes)
        return True

    def same(self, old: Binding, start: int, end: int) -> bool:
        """Whether the span [start, end) is the same code as an earlier binding (a repeated
        metavariable): the same bytes, else equal but for whitespace and comments."""
        src = self.source
        if old._source is src and src[old.start:old.end] == src[start:end]:
            return True  # (an undecoded span of this source: compared as bytes)
        text = self.text(start, end)
        return old.text == text or _same_code(old.text, text)

    def node(self, p: PNode, t: Node, b: dict[str, Binding]) -> bool:
        """Whether ``p`` matches ``t``, binding its metavariables into ``b``: by the code
        made for ``p`` where there is some (``_specialise``), else by ``generic``."""
        fast = p.fast
        if fast is None:
            fast = _specialise(p)
        if fast is not False:
            return fast(t, b, self)  # type: ignore[no-any-return]
        return self.generic(p, t, b)

    def generic(self, p: PNode, t: Node, b: dict[str, Binding]) -> bool:
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
            if count == len(p.children):
                # the kinds at the fixed places, one child at a time (no list of them all):
                # when an ignored token is among the children, the counts differ below
                child = t.child
                for i, type_ in p.shape:
                    if child(i).type != type_:  # type: ignore[union-attr]
                        return False
            kids = self.significant(t)
            if len(kids) != len(p.children):
                return False
            if count != len(p.children):  # (else the kinds were checked above)
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

    def fits(self, p: PNode, t: Node) -> bool:
        """Whether ``p`` could match ``t`` under some bindings: ``node`` without the
        metavariables' equalities, trying every split of a ``$$$`` run. A match under any
        bindings fits, so a node that does not fit is rejected without binding anything."""
        if p.metavar is not None:
            if p.kinds is not None and t.type not in p.kinds:
                return False
            return p.type != "statement" or t.type.endswith("statement") \
                or t.type in ("declaration", "compound_statement")
        if p.type != t.type:
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
                if kids[i].type != type_:
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

    def seq(self, ps: tuple[PNode, ...], i: int, ts: list[Node], j: int,
            b: dict[str, Binding], anchored: bool) -> int | None:
        """Match ps[i:] against ts[j:]; return the index in ts after the match, or None.

        ``anchored`` requires the whole of ts to be used (children of one node); a run of
        statements is matched unanchored at its end (the run may stop before the block does).
        """
        if i == len(ps):
            return j if (j == len(ts) or not anchored) else None
        p = ps[i]
        if p.seq is not None:
            nxt = ps[i + 1] if i + 1 < len(ps) else None
            # the run ends where the next element, when it is a fixed kind, can match
            fixed = nxt.type if nxt is not None and nxt.metavar is None \
                and nxt.seq is None else None
            n = len(ts)
            for k in range(n, j - 1, -1) if anchored else range(j, n + 1):
                if fixed is not None and (k == n or ts[k].type != fixed):
                    continue
                trial = dict(b)
                if k > j:
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
            return None
        end = self.seq(ps, i + 1, ts, j + 1, trial, anchored)
        if end is not None:
            b.clear()
            b.update(trial)
        return end


def _specialise(p: PNode) -> Any:
    """Python code that does what ``_Matcher.generic`` does for ``p``, with the pattern's
    kinds, counts and tokens written in as constants and its one-to-one children inline, in
    the same order (shape, then ``plan``: tokens, structure, metavariables), so that the
    same bindings come out; kept on the node (``PNode.fast``). False for what it does not
    cover (a leaf, a metavariable, a node with a ``$$$`` run among its children): those go
    to the generic matcher, as do such children of a covered node.

    Only the pattern's own values go into the code, each as a named constant (never as
    source text); the code is made once per pattern node."""
    if p.metavar is not None or p.seq is not None or not p.children or not p.plain:
        object.__setattr__(p, "fast", False)
        return False
    consts: dict[str, Any] = {"Binding": Binding, "_IG": _IGNORED_TOKENS}
    lines = ["def fast(t0, b, m):", "    src = m.source"]
    names = iter(range(1, 1 << 30))

    def const(value: Any) -> str:
        name = f"c{next(names)}"
        consts[name] = value
        return name

    def emit(q: PNode, var: str, ind: str) -> None:
        n = len(q.children)
        tag = next(names)
        kids, ks = f"kids{tag}", [f"k{tag}_{i}" for i in range(n)]
        lines.append(f"{ind}if {var}.type != {const(q.type)}:")
        lines.append(f"{ind}    return False")
        lines.append(f"{ind}{kids} = {var}.children")
        # all children significant when they are as many as the pattern's and none is
        # missing (an error below marks every ancestor); else the significant ones
        lines.append(f"{ind}if len({kids}) != {n} or {var}.has_error:")
        lines.append(f"{ind}    {kids} = m.significant({var})")
        lines.append(f"{ind}    if len({kids}) != {n}:")
        lines.append(f"{ind}        return False")
        lines.append(f"{ind}{', '.join(ks)}, = {kids}")
        shaped = set()
        for i, type_ in q.shape:
            shaped.add(i)
            lines.append(f"{ind}if {ks[i]}.type != {const(type_)}:")
            lines.append(f"{ind}    return False")
        for i, how, pc in q.plan:
            k = ks[i]
            if how == 1:
                if pc.type == "statement":
                    lines.append(f"{ind}if not ({k}.type.endswith('statement') or {k}.type in "
                                 f"('declaration', 'compound_statement')):")
                    lines.append(f"{ind}    return False")
                if pc.kinds is not None and i not in shaped:
                    lines.append(f"{ind}if {k}.type not in {const(pc.kinds)}:")
                    lines.append(f"{ind}    return False")
                if i not in shaped:  # (the unfiltered children may hold a comment)
                    lines.append(f"{ind}if {k}.type in _IG:")
                    lines.append(f"{ind}    return False")
                if pc.metavar == "_":
                    continue
                name = const(pc.metavar)
                old = f"old{tag}_{i}"
                lines.append(f"{ind}{old} = b.get({name})")
                lines.append(f"{ind}if {old} is None:")
                lines.append(f"{ind}    b[{name}] = Binding({name}, {k}.start_byte, {k}.end_byte, "
                             f"None, ({k},), src)")
                lines.append(f"{ind}elif not m.same({old}, {k}.start_byte, {k}.end_byte):")
                lines.append(f"{ind}    return False")
            elif how == 0:
                raw = f"raw{tag}_{i}"
                lines.append(f"{ind}if {k}.child_count and m.significant({k}):")
                lines.append(f"{ind}    return False")
                lines.append(f"{ind}{raw} = src[{k}.start_byte:{k}.end_byte]")
                lines.append(f"{ind}if {raw} != {const(pc.raw)} and {const(pc.text)} != "
                             f"' '.join({raw}.decode('utf-8', 'replace').split()):")
                lines.append(f"{ind}    return False")
            elif pc.metavar is None and pc.seq is None and pc.children and pc.plain:
                emit(pc, k, ind)
            else:
                lines.append(f"{ind}if not m.node({const(pc)}, {k}, b):")
                lines.append(f"{ind}    return False")

    emit(p, "t0", "    ")
    lines.append("    return True")
    scope: dict[str, Any] = {}
    exec(compile("\n".join(lines), f"<anchor node {p.type}>", "exec"), consts, scope)
    fast = scope["fast"]
    object.__setattr__(p, "fast", fast)
    return fast


def _same_code(a: str, b: str) -> bool:
    """Equal as code: whitespace and comments do not matter."""
    strip = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
    return "".join(strip.sub(" ", a).split()) == "".join(strip.sub(" ", b).split())


@lru_cache(maxsize=4096)
def _compiled(anchor: str, where: str, kinds: tuple[tuple[str, str], ...] = ()) -> Pattern:
    return compile_pattern(anchor, where, kinds)


def pattern_of(rule: Rule) -> Pattern:
    """The rule's anchor with its metavariables' kinds, compiled once per process (cached
    by its text)."""
    return _compiled(rule.anchor, f"{rule.path}:{rule.anchor_line}:{rule.anchor_col}",
                     rule.metavar_kinds)


def index_nodes(unit: Unit, types: Iterable[str]) -> dict[str, list[Node]]:
    """All nodes of the given types, by type, in source order (the unit's per-type index:
    one query run per unit, shared with the model and the guards)."""
    return unit.nodes_by_type(types)


def find_matches(pattern: Pattern, unit: Unit, rule: Rule | None = None,
                 candidates: dict[str, list[Node]] | None = None) -> Iterator[Match]:
    """Every place in ``unit`` where ``pattern`` matches, in source order."""
    if any(w not in unit.source for w in pattern.words):
        return  # early reject: a word of the anchor is not in the file at all
    if pattern.runs:
        squeezed = unit.squeezed
        if any(r not in squeezed for r in pattern.runs):
            return  # nor a run of its tokens
    if candidates is None:
        candidates = index_nodes(unit, [pattern.root_type])
    m = _Matcher(unit.source, unit._kids)
    find = unit.source.find
    words = pattern.words
    statements = unit._statements
    for node in candidates.get(pattern.root_type, ()):
        if words:
            s, e = node.start_byte, node.end_byte
            for w in words:
                if find(w, s, e) < 0:
                    break
            else:
                w = None
            if w is not None:
                continue  # a word of the anchor is not inside this candidate
        if pattern.is_sequence:
            block = statements.get(node.id)
            if block is None:  # (shared by the runs of every rule: one list per block)
                kids = block_statements(node)
                block = statements[node.id] = (kids, [k.type for k in kids])
            kids, types = block
            if not all(any(t == e.type and m.fits(e, kids[i]) for i, t in enumerate(types))
                       for e in pattern.fixed):
                continue  # a statement of the run fits none of the block's
            first = pattern.elements[0]
            fixed = None if (first.metavar is not None or first.seq is not None) else first.type
            for j in range(len(kids)):
                if fixed is not None and types[j] != fixed:
                    continue  # a run must start with the anchor's first kind of statement
                b: dict[str, Binding] = {}
                end = m.seq(pattern.elements, 0, kids, j, b, anchored=False)
                if end is None or end == j:
                    continue
                nodes = tuple(kids[j:end])
                yield Match(rule, unit, unit.function_at(nodes[0].start_byte),  # type: ignore[arg-type]
                            nodes[0].start_byte, nodes[-1].end_byte, nodes, b)
        else:
            b = {}
            if m.node(pattern.elements[0], node, b):
                yield Match(rule, unit, unit.function_at(node.start_byte),  # type: ignore[arg-type]
                            node.start_byte, node.end_byte, (node,), b)
