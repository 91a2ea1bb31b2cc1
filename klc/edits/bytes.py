"""Byte edits: the one place where edits meet the file. ``minimal_edit`` shrinks an edit to
the tokens it changes (keeping the original's blanks and comments), ``apply_edits`` applies
non-overlapping edits without ever gluing two tokens into one."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from klc.errors import KlcError

if TYPE_CHECKING:
    from klc.cuda.model import Unit


@dataclass(frozen=True)
class ByteEdit:
    """Replace source[start:end] with text (an insertion when start == end)."""

    start: int
    end: int
    text: str
    what: str  # for messages: "replace", "insert_body_start", ...
    # it stands for the whole match (a replace: its edit may have shrunk to the tokens it
    # changes, but a match overlapping this one was judged on code it rewrites)
    claims_match: bool = field(default=False, compare=False)


# C++ tokens, for comparing code as the compiler reads it: a preprocessor line whole (its
# line break ends it), string and character literals, names and numbers, operators (the
# longest first); blanks and comments separate tokens and are not tokens
_TOKEN_RE = re.compile(rb"""
    (?P<skip>\s+|//[^\n]*|/\*[\s\S]*?\*/)
  | (?P<tok>\#(?:\\\n|[^\n])*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|[A-Za-z_0-9.]+
           |>>=|<<=|->\*|\.\.\.|::|->|\+\+|--|<<|>>|<=>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=
           |\#\#|[^\sA-Za-z_0-9.])
""", re.X)


def _tokens(text: bytes) -> list[tuple[int, int, bytes]]:
    """(start, end, the token as compared: a directive with its blanks collapsed)."""
    return [(m.start(), m.end(), b" ".join(m.group().split()) if m.group()[:1] == b"#"
             else m.group()) for m in _TOKEN_RE.finditer(text) if m.lastgroup == "tok"]


def minimal_edit(source: bytes, edit: ByteEdit) -> ByteEdit:
    """The edit shrunk to the tokens it changes: the leading and trailing tokens that the
    replacement writes as the original had them keep the original bytes, with their blanks,
    line breaks and comments (``#pragma unroll`` put before ``for (...)\n    stmt;`` leaves
    the loop as it was written, not joined onto one line). Tokens are compared as the
    compiler reads them, so the result means what the full replacement means."""
    old = source[edit.start:edit.end]
    new = edit.text.encode()
    a, b = _tokens(old), _tokens(new)
    p = 0
    while p < len(a) and p < len(b) and a[p][2] == b[p][2]:
        p += 1
    q = 0
    while q < len(a) - p and q < len(b) - p and a[-1 - q][2] == b[-1 - q][2]:
        q += 1
    if p == 0 and q == 0:
        return edit
    old_from = a[p - 1][1] if p else 0
    new_from = b[p - 1][1] if p else 0
    old_to = a[len(a) - q][0] if q else len(old)
    new_to = b[len(b) - q][0] if q else len(new)
    if p + q == len(a) == len(b):  # the same tokens: only blanks differ, keep them
        return ByteEdit(edit.start, edit.start, "", edit.what)
    return ByteEdit(edit.start + old_from, edit.start + old_to,
                    new[new_from:new_to].decode("utf-8"), edit.what)


def apply_edits(source: bytes, edits: list[ByteEdit],
                spans: list[tuple[int, int, int, int]] | None = None) -> bytes:
    """Apply non-overlapping edits (insertions at one offset keep their order). ``spans``,
    when given, receives each edit's (old start, old end, new start, new end) in order: where
    the code after it moved.

    An edit never glues two tokens into one: where the text it writes (or, for a deletion,
    the code it closes up) would put a word character against another (``int *`` +
    ``__restrict__`` + ``g_data``), a blank goes between them. One rule at the one place
    where edits meet the file, rather than a spacing case in each kind of edit."""
    ordered = sorted(enumerate(edits), key=lambda ie: (ie[1].start, ie[1].end, ie[0]))
    out: list[bytes] = []
    pos = 0
    for _, e in ordered:
        if e.start < pos:
            raise KlcError(f"overlapping edits at byte {e.start} ({e.what})")
        out.append(source[pos:e.start])
        text = e.text.encode()
        before = _last_byte(out)
        after = source[e.end:e.end + 1]
        if text:
            if _glues(before, text[:1]):
                text = b" " + text
            if _glues(text[-1:], after):
                text += b" "
        elif _glues(before, after) and not _glues(source[e.start - 1:e.start] if e.start
                                                  else b"", source[e.start:e.start + 1]):
            text = b" "  # a deletion that would join the words around it
        if spans is not None:
            at = sum(map(len, out))
            spans.append((e.start, e.end, at, at + len(text)))
        out.append(text)
        pos = e.end
    out.append(source[pos:])
    return b"".join(out)


def _last_byte(chunks: list[bytes]) -> bytes:
    for c in reversed(chunks):
        if c:
            return c[-1:]
    return b""


def _glues(left: bytes, right: bytes) -> bool:
    """Would these two bytes, side by side, run two tokens into one? (word characters: a
    name, a keyword or a number.)"""
    return bool(left) and bool(right) and (left.isalnum() or left == b"_") and (
        right.isalnum() or right == b"_")


def _common(a: bytes, b: bytes) -> int:
    """The length of the common prefix of two byte strings."""
    n = min(len(a), len(b))
    lo, hi = 0, n  # (bisection over slice comparisons, in C)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class Moves:
    """Where each offset of a source went after some steps of edits (``apply_edits``' spans,
    or the one span in which two texts differ): the pipeline finds a site it judges again
    on the rewritten code where its match moved to."""

    def __init__(self) -> None:
        self.steps: list[list[tuple[int, int, int, int]]] = []

    def add(self, spans: list[tuple[int, int, int, int]]) -> None:
        self.steps.append(sorted(spans))

    def add_diff(self, old: bytes, new: bytes) -> None:
        """One step from ``old`` to ``new``: the span between their common prefix and their
        common suffix changed."""
        if old == new:
            return
        p = _common(old, new)
        q = _common(old[p:][::-1], new[p:][::-1])
        self.steps.append([(p, len(old) - q, p, len(new) - q)])

    def new_offset(self, pos: int) -> int | None:
        """Where old offset ``pos`` is now; None when an edit replaced the text there."""
        for spans in self.steps:
            delta = 0
            for os_, oe, _ns, ne in spans:
                if os_ > pos:
                    break
                if os_ != oe and pos < oe:
                    return None
                delta = ne - oe
            pos += delta
        return pos


# Masked text a rewrite may change: a ``#pragma`` line (the pragma rules add and remove them)
# and an attribute such as ``__align__(16)`` (a rule's template may spell a declaration
# without it, as single_buffer_tiles_to_plain does). Every other mask is code the parser
# never saw as written (a preprocessor directive, a branch of ``#if`` it did not take, a
# statement-like or specifier macro): a rewrite renders its replacement from the tree, so an
# edit over such text would drop it.
_EDITABLE_MASKS = frozenset({"pragma", "attribute"})


def hidden_text(unit: Unit, edits: list[ByteEdit]) -> str | None:
    """Why a site's byte edits may not be made, or None: an edit that drops masked text other
    than a pragma or an attribute (removes it, cuts into it or inserts inside it; a
    replacement that writes the whole of it again, as a bound metavariable does, keeps it),
    e.g. a loop header between ``#if`` and ``#else``, whose deletion would leave the
    ``#endif`` without its ``#if``."""
    for e in edits:
        for m in unit.masks:
            if m.reason in _EDITABLE_MASKS:
                continue
            inside = m.start < e.start < m.end if e.start == e.end else \
                e.start < m.end and m.start < e.end
            kept = e.start <= m.start and m.end <= e.end and \
                unit.source[m.start:m.end].decode(errors="replace").strip() in e.text
            if inside and not kept:  # kept: the replacement writes it again (a bound $X)
                text = unit.source[m.start:m.end].decode(errors="replace").strip()
                first = text.splitlines()[0] if text else ""
                shown = first if len(first) <= 40 else first[:37] + "..."
                return (f"its edit would change `{shown}` at {unit.where(m.start)} ({m.reason}: "
                        "text the parser did not see as code), which a rewrite never touches")
    return None
