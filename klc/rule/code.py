"""Code blocks of a rule: the metavariables and holes they name (``code_refs``), and whether
they parse as CUDA (``parse_problem``: the anchor and every template are checked at load
time, so that a rule author never meets a syntax error first at rewrite time)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from tree_sitter import Node, Query, QueryCursor

from klc.cuda.syntax import LANGUAGE, parser
from klc.rule.dots import for_parsing as dots_for_parsing

IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_CODE_SCAN = re.compile(
    r"""(?P<skip>//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
      | (?P<seq>\$\$\$(?P<seqname>[A-Za-z_]\w*))
      | (?P<meta>\$(?P<metaname>[A-Za-z_]\w*))
      | (?P<hole>\?(?P<holename>[A-Za-z_]\w*))""",
    re.X,
)


@dataclass(frozen=True)
class CodeRef:
    """A metavariable (``$X``: kind ``metavar``; ``$$$X``: ``sequence``) or a hole (``?h``)
    found in code, outside comments and string literals."""

    kind: str
    name: str
    start: int
    end: int


def code_refs(text: str) -> Iterator[CodeRef]:
    """The metavariables and holes of a code text, in order."""
    for m in _CODE_SCAN.finditer(text):
        if m.group("seq"):
            yield CodeRef("sequence", m.group("seqname"), m.start(), m.end())
        elif m.group("meta"):
            yield CodeRef("metavar", m.group("metaname"), m.start(), m.end())
        elif m.group("hole"):
            yield CodeRef("hole", m.group("holename"), m.start(), m.end())


_STATEMENT_WRAP = ("void __klc_anchor__() {\n", "\n}\n")
_WRAPPERS = (
    _STATEMENT_WRAP,
    ("", "\n"),
    ("void __klc_anchor__() {\nauto __klc_e__ = (", "\n);\n}\n"),
)
_PLACEHOLDER_END = re.compile(r"\$+[A-Za-z_]\w*$")


@cache
def _problem_query() -> Query:
    return Query(LANGUAGE, "(ERROR) @error (MISSING) @missing")


def parse_problem(text: str, wrappers: tuple[tuple[str, str], ...] = _WRAPPERS,
                  template: bool = False) -> tuple[int, str] | None:
    """None when the code parses as CUDA in one of the wrappers (top level, statements in a
    body, an expression); else (character offset into ``text``, message) from the attempt
    that got furthest. A missing ``;`` right after a metavariable is allowed: ``$BODY`` may
    stand for a whole statement. A ``template`` (rendered as text, never matched) may also
    hold a statement metavariable or hole that tree-sitter could only wrap in an ERROR node
    (``{ ?body }``)."""
    best: tuple[int, str] | None = None
    for prefix, suffix in wrappers:
        src = (prefix + text + suffix).encode()
        tree = parser().parse(src)
        if not tree.root_node.has_error:
            return None
        caps = QueryCursor(_problem_query()).captures(tree.root_node)
        problems = sorted(caps.get("error", []) + caps.get("missing", []),
                          key=lambda n: n.start_byte)
        first = next((n for n in problems if not _allowed_missing(n, src)
                      and not (template and _lone_placeholder(n, src))), None)
        if first is None:
            return None
        offset = len(src[: first.start_byte].decode("utf-8", "replace")) - len(prefix)
        offset = max(0, min(offset, len(text)))
        message = _problem_words(first, src)
        if best is None or offset > best[0]:
            best = (offset, message)
    return best


def _allowed_missing(node: Node, src: bytes) -> bool:
    if not node.is_missing or node.type != ";":
        return False
    before = src[: node.start_byte].decode("utf-8", "replace").rstrip()
    return bool(_PLACEHOLDER_END.search(before))


def _lone_placeholder(node: Node, src: bytes) -> bool:
    text = src[node.start_byte:node.end_byte].decode("utf-8", "replace").strip()
    return node.type == "ERROR" and bool(re.fullmatch(r"\$+[A-Za-z_]\w*", text))


def _problem_words(node: Node, src: bytes) -> str:
    if node.is_missing:
        return f'does not parse as CUDA: missing "{node.type}"'
    text = src[node.start_byte:node.end_byte].decode("utf-8", "replace")
    first = next((c for c in _leaves(node) if c.end_byte > c.start_byte), None)
    token = src[first.start_byte:first.end_byte].decode("utf-8", "replace") if first \
        else text
    snippet = " ".join(token.split())[:30]
    return f'does not parse as CUDA: unexpected "{snippet}"' if snippet \
        else "does not parse as CUDA"


def _leaves(node: Node) -> Iterator[Node]:
    if node.child_count == 0:
        yield node
    for c in node.children:
        yield from _leaves(c)


def for_parsing(text: str) -> str:
    """Holes become identifiers of the same length (``?tile`` -> ``$tile``: tree-sitter-cuda
    accepts ``$`` in identifiers), and statement dots the statement ``$_;`` padded to the
    line's length (``klc.rule.dots``), so positions stay exact."""
    return re.sub(r"\?(?=[A-Za-z_])", "$", dots_for_parsing(text))

