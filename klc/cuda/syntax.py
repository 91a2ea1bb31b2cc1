"""CUDA syntax: the tree-sitter-cuda grammar, its field ids, the per-thread parser and the
node and byte helpers every stage shares.

The bottom of ``klc.cuda`` (``docs/architecture.md``, "klc.cuda"): it knows the grammar and
nothing of macros or of the model.
"""

from __future__ import annotations

import operator
import re
import threading
from collections.abc import Iterator
from functools import lru_cache
from itertools import accumulate

import tree_sitter_cuda
from tree_sitter import Language, Node, Parser, Point, Query, QueryCursor, Tree

LANGUAGE = Language(tree_sitter_cuda.language())


def _field(name: str) -> int:
    fid = LANGUAGE.field_id_for_name(name)
    if fid is None:  # (a grammar without the field: fail at import, not on a file)
        raise RuntimeError(f"tree-sitter-cuda has no field {name!r}")
    return fid


# field ids of the grammar: ``child_by_field_id`` costs a third of ``child_by_field_name``,
# which looks the name up on every call
F_ARGUMENT = _field("argument")
F_ARGUMENTS = _field("arguments")
F_BODY = _field("body")
F_CONDITION = _field("condition")
F_DECLARATOR = _field("declarator")
F_DEFAULT_VALUE = _field("default_value")
F_DIRECTIVE = _field("directive")
F_FIELD = _field("field")
F_FUNCTION = _field("function")
F_INDICES = _field("indices")
F_INITIALIZER = _field("initializer")
F_LEFT = _field("left")
F_NAME = _field("name")
F_OPERATOR = _field("operator")
F_PARAMETERS = _field("parameters")
F_RIGHT = _field("right")
F_SIZE = _field("size")
F_TYPE = _field("type")
F_UPDATE = _field("update")
F_VALUE = _field("value")

_local = threading.local()


def parser() -> Parser:
    """One tree-sitter parser per thread (parsers are not thread-safe)."""
    p = getattr(_local, "parser", None)
    if p is None:
        p = _local.parser = Parser(LANGUAGE)
    return p


_EXPR_PREFIX = b"void __klc_expr__() {\nauto __klc_e__ = ("


@lru_cache(maxsize=4096)
def parse_expression(text: str) -> tuple[Node, bytes] | None:
    """Parse a text (a #define body, a launch configuration, a hole value) as one C++
    expression: its node (the parenthesised expression around it) and the bytes it was
    parsed from; None when it is not one expression."""
    src = _EXPR_PREFIX + text.encode() + b");\n}\n"
    root = parser().parse(src).root_node
    if root.has_error:
        return None
    node = root.descendant_for_byte_range(len(_EXPR_PREFIX) - 1, len(src) - 5)
    while node is not None and not (node.type == "parenthesized_expression"
                                    and node.start_byte == len(_EXPR_PREFIX) - 1):
        node = node.parent
    if node is None or node.end_byte != len(src) - 4:
        return None  # "a)(b": the parentheses close before the text ends
    return node, src


# what ``Unit.squeezed`` takes out besides comments and line continuations: whitespace, and
# the punctuation the matcher ignores (klc.match.pattern._IGNORED_TOKENS)
SQUEEZED_OUT = b" \t\r\n\f\v;,"
LOOP_TYPES = ("for_statement", "for_range_loop", "while_statement", "do_statement")


_by_start = operator.attrgetter("start_byte")
_by_end = operator.attrgetter("end_byte")


def sort_doc_order(nodes: list[Node]) -> None:
    """Sort in place in document order (by start, then the longer first; ties keep their
    order) with two stable sorts on C-level keys: by end descending, then by start."""
    nodes.sort(key=_by_end, reverse=True)
    nodes.sort(key=_by_start)


def comment_nodes(root: Node, parsed: bytes) -> list[Node]:
    """The comments of a tree, in document order, found from the text: each ``//`` or ``/*``
    of the parsed text is looked up in the tree (one descent), and is a comment's start
    where the node there is a comment that starts at it; what it holds is skipped. A string's
    ``//`` is a string's. A query for comments would visit every node of the tree (the
    listing's costliest query run, for a few nodes)."""
    out: list[Node] = []
    find, at_byte = parsed.find, root.descendant_for_byte_range
    line, block = find(b"//"), find(b"/*")
    while line >= 0 or block >= 0:
        at = line if block < 0 or 0 <= line < block else block
        node = at_byte(at, at + 2)
        if node is not None and node.type == "comment" and node.start_byte == at:
            out.append(node)
            pos = node.end_byte
        else:
            pos = at + 1
        if 0 <= line < pos:
            line = find(b"//", pos)
        if 0 <= block < pos:
            block = find(b"/*", pos)
    return out


_TYPE_QUERIES: dict[tuple[str, ...], Query] = {}


def type_query(types: tuple[str, ...]) -> Query:
    """The query that captures every node of the given types, each under its type's name:
    compiled on first use and kept (a compile costs 15-30 ms, whatever the query, for this
    grammar), one for every reader that asks for the same types."""
    q = _TYPE_QUERIES.get(types)
    if q is None:
        q = _TYPE_QUERIES[types] = Query(LANGUAGE, " ".join(f"({t}) @{t}" for t in types))
    return q


_PROBLEM_QUERY: list[Query] = []  # compiled on first use (most files need none)


def problem_nodes(tree: Tree) -> list[Node]:
    """The ERROR and MISSING nodes, in source order. A descent that enters only subtrees
    flagged ``has_error``: a query would visit every node of the tree."""
    root = tree.root_node
    found: list[Node] = [root] if root.is_error else []
    stack = [root]
    while stack:
        node = stack.pop()
        for child in reversed(node.children):
            if child.is_error or child.is_missing:
                found.append(child)
            if child.has_error and not child.is_missing:
                stack.append(child)  # an ERROR can hold more precise ones
    if not found and root.has_error:
        # a MISSING token that is not a visible child (the newline that ends a directive
        # on a last line without one): only a query sees it
        if not _PROBLEM_QUERY:
            _PROBLEM_QUERY.append(Query(LANGUAGE, "(ERROR) @error (MISSING) @missing"))
        caps = QueryCursor(_PROBLEM_QUERY[0]).captures(root)
        found = caps.get("error", []) + caps.get("missing", [])
    found.sort(key=lambda n: n.start_byte)
    return found


def balanced_end(data: bytes, open_paren: int) -> int | None:
    """The offset just after the parenthesis that closes the one at ``open_paren`` (looked
    for in the next 4,096 bytes), or None."""
    depth = 0
    for i in range(open_paren, min(len(data), open_paren + 4096)):
        c = data[i]
        if c == 40:
            depth += 1
        elif c == 41:
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def line_start(data: bytes, offset: int) -> int:
    """The offset where the line holding ``offset`` starts."""
    return data.rfind(b"\n", 0, offset) + 1


def point(data: bytes, offset: int) -> Point:
    """tree-sitter's (row, column) of a byte offset."""
    line = data.count(b"\n", 0, offset)
    return Point(line, offset - line_start(data, offset))


def line_starts(data: bytes) -> list[int]:
    """The offsets of every line start (each line's length and its newline summed, in C)."""
    return list(accumulate(map(_PLUS_ONE, map(len, data.split(b"\n")[:-1])), initial=0))


_PLUS_ONE = (1).__add__



# the bytes a word of C is made of (and ``$``, a metavariable's)
WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$")


def word_occurrences(src: bytes, word: bytes, start: int, end: int) -> Iterator[int]:
    """Where ``word`` stands in src[start:end] as a word of its own (no letter, digit, ``_``
    or ``$`` on either side), in order: scans at C speed."""
    find = src.find
    size = len(word)
    at = find(word, start, end)
    while at >= 0:
        after = at + size
        if (at == 0 or src[at - 1] not in WORD_BYTES) and (
                after >= len(src) or src[after] not in WORD_BYTES):
            yield at
        at = find(word, at + 1, end)


def matches_at(data: bytes, literal: bytes,
               pattern: re.Pattern[bytes]) -> Iterator[re.Match[bytes]]:
    """The matches ``pattern.finditer(data)`` gives, for a pattern that starts with
    ``literal``: its places found by ``bytes.find`` (a scan two to four times faster than the
    regular expression engine's) and the pattern matched at each, for a literal that is rare
    in the text (each place costs a match tried from Python)."""
    find, match = data.find, pattern.match
    at = find(literal)
    while at >= 0:
        m = match(data, at)
        if m is None:
            at = find(literal, at + 1)
        else:
            yield m
            at = find(literal, m.end())
