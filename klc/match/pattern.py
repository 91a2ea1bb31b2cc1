"""Anchors compiled to patterns: ``PNode`` trees parsed by tree-sitter-cuda, the words and
token runs that reject a file early, metavariables' kinds."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tree_sitter import Node

from klc.cuda.syntax import F_BODY, F_DECLARATOR, F_VALUE, SQUEEZED_OUT, parser
from klc.errors import KlcError
from klc.rule.dots import RUN_PREFIX, Dots, DotsError, as_runs, dots_lines
from klc.rule.model import METAVAR_KINDS

if TYPE_CHECKING:
    pass


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
# the type of an isomorphism's early-return spelling of a run's last statement
# (``klc.match.iso._early_return``): it starts with the ``if`` of its first child
EARLY = "early_return"
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
    # statement dots (``...``): a ``$$$__dots<i>`` run, tried shortest first, whose skipped
    # statements ``klc.match.dots`` judges against the when clauses once the match is whole
    dots: Dots | None = None
    # an alternation made by an isomorphism (klc.match.iso): the anchor's own spelling first,
    # then the equivalent ones, each with the name of a check on the code it matched (CHECKS)
    alts: tuple[PNode, ...] = ()
    alt_checks: tuple[str | None, ...] = ()
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
    # the node types a match of this node can have (ast-grep's "potential kinds"): its own
    # type, a metavariable's kinds, the union over an alternation's spellings; None for any
    starts: frozenset[str] | None = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "starts", _starts(self))
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
            if c.seq is None and c.type and (c.metavar is None or (c.kinds is not None
                                                        and len(c.kinds) == 1))))
        object.__setattr__(self, "plan", tuple(
            (i, 1 if c.metavar is not None else
             0 if not c.children and c.raw is not None and c.seq is None else 2, c)
            for i, c in ((i, self.children[i]) for i in self.order)))


def _starts(p: PNode) -> frozenset[str] | None:
    """``PNode.starts``: what ``_Matcher.node`` can match ``p`` against (a node of another
    type fails there at once, so a caller may skip it)."""
    if p.seq is not None:
        return None
    if p.metavar is not None:
        return p.kinds
    if p.alts:
        out: set[str] = set()
        for a in p.alts:
            kinds = a.children[0].starts if a.type == EARLY and a.children else a.starts
            if kinds is None:
                return None
            out |= kinds
        return frozenset(out)
    return frozenset((p.type,)) if p.type else None


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
    dots: tuple[Dots, ...] = ()  # the anchor's statement dots, by rank
    # the names bound as runs ($$$X, the dots' runs among them): the others bind one node
    seqs: frozenset[str] = frozenset()
    # ``anchor any``: the branches' patterns (this one's other fields are the first's), and
    # the metavariables every branch binds (a match keeps only those)
    alternatives: tuple[Pattern, ...] = ()
    common: frozenset[str] = frozenset()
    # matched again where the code as written holds no match (klc.match.reading): True, the
    # isomorphism ``read_through`` (stable locals and helpers read as what they stand for,
    # and comparisons tree-sitter misread); "rereads", the misread comparisons alone
    reads: bool | str = False
    # the other tokens every spelling spells (``32``, ``<<``, ``?``): a match as written
    # holds them in its own bytes (``klc.match.find.holding``); not asked of the file, whose
    # reading may give them (``warpSize`` is read as 32)
    tokens: tuple[bytes, ...] = ()

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
    try:
        dots = dots_lines(code)
    except DotsError as e:
        raise KlcError(f"{where_}: {e.message}") from None
    if dots:
        pattern = _compile_plain(as_runs(code), where_)
        return _with_dots(replace(pattern, code=code, key=code), dots, where_)
    return _compile_plain(code, where_)


def _is_dots(p: PNode) -> bool:
    return p.seq is not None and p.seq.startswith(RUN_PREFIX)


def _with_dots(pattern: Pattern, dots: list[Dots], where_: str) -> Pattern:
    """The dots' runs marked with their when clauses; dots that begin or end the anchor, or
    stand next to another run, are refused (they would match anything, or nothing known)."""
    els = pattern.elements
    if _is_dots(els[0]) or _is_dots(els[-1]):
        raise KlcError(f"{where_}: `...` cannot begin or end the anchor (it would stand for "
                       "any code around the match): put it between statements")

    def mark(p: PNode) -> PNode:
        if _is_dots(p):
            return replace(p, dots=dots[int(p.seq[len(RUN_PREFIX):])])  # type: ignore[index]
        if not p.children:
            return p
        kids = tuple(mark(c) for c in p.children)
        for a, b in itertools.pairwise(kids):
            if a.seq is not None and b.seq is not None and (a.dots or b.dots):
                raise KlcError(f"{where_}: `...` next to another run ($$$ or `...`) is "
                               "ambiguous: put a statement between them")
        return replace(p, children=kids)

    elements = tuple(mark(e) for e in els)
    fixed = tuple(mark(e) for e in pattern.fixed)
    return replace(pattern, elements=elements, fixed=fixed, dots=tuple(dots))


def _compile_plain(code: str, where_: str) -> Pattern:
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
    tokens: set[str] = set()
    memo: dict[int, set[str]] = {}
    held: dict[int, set[str]] = {}
    for e in elements:
        words |= _words_of(e, memo)
        tokens |= _tokens_of(e, held)
    is_sequence = len(elements) > 1
    root_type = "compound_statement" if is_sequence else elements[0].type
    fixed = tuple(sorted((e for e in elements if e.metavar is None and e.seq is None
                          and e.type),
                         key=_size)) if is_sequence else ()
    return Pattern(code, elements, is_sequence, root_type,
                   tuple(sorted(w.encode() for w in words)), fixed, runs=_token_runs(elements),
                   seqs=frozenset(_names(elements, runs=True)),
                   tokens=tuple(sorted(t.encode() for t in tokens - _SPELLED_BY_MOST)))


# tokens that nearly every candidate spells, which the prefilters (``klc.match.find.holding``,
# a run statement's ``_Fits``) do not ask a candidate for: a closing bracket comes with its
# opening one, and most statements hold a call, an assignment, a field or a sum (asked, they
# cost a search of each candidate's bytes and turned away almost none)
_SPELLED_BY_MOST = frozenset({"(", ")", "]", "}", "=", ".", "+", ";", ","})


def _names(elements: tuple[PNode, ...], runs: bool = False,
           memo: dict[int, set[str]] | None = None) -> set[str]:
    """Every metavariable the elements bind ($X, $$$X, text ones), or only the runs. An
    isomorphism's alternations share their subtrees: each node is read once (``memo``)."""
    memo = {} if memo is None else memo
    out: set[str] = set()
    for p in elements:
        got = memo.get(id(p))
        if got is None:
            got = {n for n in ((p.seq,) if runs else (p.metavar, p.seq, *p.text_vars))
                   if n is not None and n != "_"}
            got |= _names(p.children, runs, memo)
            got |= _names(p.alts, runs, memo)  # (an isomorphism's spellings bind the same)
            memo[id(p)] = got
        out |= got
    return out


def _words_of(p: PNode, memo: dict[int, set[str]]) -> set[str]:
    """The words a match of ``p`` holds: of an alternation, those all its spellings hold
    (each node read once: the spellings share subtrees)."""
    got = memo.get(id(p))
    if got is not None:
        return got
    words: set[str] = set()
    if p.text and not p.metavar and not p.seq and p.text_pattern is None:
        words.update(_WORD_RE.findall(p.text))
    if p.alts:
        words.update(set.intersection(*(_words_of(a, memo) for a in p.alts)))
    for c in p.children:
        words |= _words_of(c, memo)
    memo[id(p)] = words
    return words


def _tokens_of(p: PNode, memo: dict[int, set[str]]) -> set[str]:
    """The tokens other than words (``_words_of``) a match of ``p`` spells in its own bytes:
    a leaf compared by its text, that text printable ASCII with no blank (a leaf matches a
    node whose text is the leaf's, blanks aside, so such a text is in the node's bytes); of
    an alternation, those all its spellings spell."""
    got = memo.get(id(p))
    if got is not None:
        return got
    tokens: set[str] = set()
    text = p.text
    if text and not p.children and p.metavar is None and p.seq is None \
            and p.text_pattern is None and _TOKEN_RE.fullmatch(text) \
            and not _WORD_RE.fullmatch(text):
        tokens.add(text)
    if p.alts:
        tokens.update(set.intersection(*(_tokens_of(a, memo) for a in p.alts)))
    for c in p.children:
        tokens |= _tokens_of(c, memo)
    memo[id(p)] = tokens
    return tokens


_TOKEN_RE = re.compile(r"[!-~]+")  # (printable ASCII, no blank)
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
