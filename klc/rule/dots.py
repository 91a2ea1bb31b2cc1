"""Statement dots (``...``, Coccinelle's): a line of an anchor that holds only ``...`` matches
any run of statements of its block, none included, with ``when`` clauses on what the skipped
code may do; a line of a ``replace`` template that holds only ``...`` writes back what the
anchor's dots of the same rank skipped, byte for byte (docs/rules.md, "Statement dots").

    int $R = $E;
    ... when not mentions(threadIdx, blockIdx) when not stores
    if ($R < $ROWS) { $$$BODY; }

A clause is ``when any`` (no constraint, not even the default one), ``when not writes(A, ...)``
(no assignment, ``++``/``--``, declaration of, or store through any of them), ``when not
mentions(A, ...)`` (none of them appears) or ``when not stores`` (no store to memory at all);
each ``A`` is a metavariable of the anchor or a plain name. Without ``when any`` the skipped
statements may not write what the anchor's one-node metavariables bound (their identifiers):
``$R`` above keeps its meaning across the dots; a name they declare is theirs, read by the
match (and written by the rewrite) only after them in their block (``klc.match.dots``).

Here: finding and parsing dots lines (``dots_lines``), the text the parser sees instead
(``for_parsing``: the same length, ``$_;``), and the text the matcher compiles (``as_runs``:
the i-th dots line becomes ``$$$__dots<i>;``, a run metavariable that klc.match knows by its
name). Nothing here matches or judges code."""

from __future__ import annotations

import re
from dataclasses import dataclass

# a line holding only `...` and its when clauses
DOTS_LINE = re.compile(r"(?m)^([ \t]*)\.\.\.(?=[ \t]|$)([^\n]*)$")
_CLAUSE = re.compile(
    r"\s*when\s+(?:(any)\b|not\s+(stores)\b|not\s+(writes|mentions)\s*\(([^()]*)\))")
_ARG = re.compile(r"\$[A-Za-z_]\w*|[A-Za-z_]\w*")
RUN_PREFIX = "__dots"  # the run metavariable of the i-th dots line: $$$__dots<i>


@dataclass(frozen=True)
class Dots:
    """One ``...`` line: its rank among the text's dots and what its ``when`` clauses say.
    ``writes`` and ``mentions`` hold metavariables (``$R``) and plain names."""

    index: int
    any: bool = False
    stores: bool = False
    writes: tuple[str, ...] = ()
    mentions: tuple[str, ...] = ()
    offset: int = 0  # of the ``...`` in the text
    end: int = 0  # of the line

    @property
    def run(self) -> str:
        """The run metavariable the matcher binds the skipped statements to (no ``$``)."""
        return f"{RUN_PREFIX}{self.index}"


class DotsError(ValueError):
    """A dots line that does not say what it means: (offset into the text, message)."""

    def __init__(self, offset: int, message: str) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message


def dots_lines(text: str) -> list[Dots]:
    """The dots lines of a code text, in order; DotsError for a clause that does not read."""
    out: list[Dots] = []
    for m in DOTS_LINE.finditer(text):
        rest, pos = m.group(2), m.end(1) + 3
        any_ = stores = False
        writes: list[str] = []
        mentions: list[str] = []
        i = 0
        while rest[i:].strip():
            c = _CLAUSE.match(rest, i)
            if c is None:
                raise DotsError(pos + i + len(rest[i:]) - len(rest[i:].lstrip()),
                                "after `...` only `when` clauses may follow: `when any`, "
                                "`when not writes(A, ...)`, `when not mentions(A, ...)`, "
                                "`when not stores`")
            if c.group(1):
                any_ = True
            elif c.group(2):
                stores = True
            else:
                args = [a.strip() for a in c.group(4).split(",")]
                for a in args:
                    if not _ARG.fullmatch(a):
                        raise DotsError(pos + c.start(4), f"`when not {c.group(3)}(...)` takes "
                                        "metavariables and names, separated by commas")
                (writes if c.group(3) == "writes" else mentions).extend(args)
            i = c.end()
        if any_ and (stores or writes or mentions):
            raise DotsError(m.end(1), "`when any` lets the dots skip anything: it cannot stand "
                            "with other when clauses")
        out.append(Dots(len(out), any_, stores, tuple(writes), tuple(mentions),
                        m.end(1), m.end()))
    return out


def for_parsing(text: str) -> str:
    """Each dots line as ``$_;`` and blanks, the same length: a statement to tree-sitter,
    and every offset stays where it was."""
    return DOTS_LINE.sub(lambda m: m.group(1) + "$_;" + " " * len(m.group(2)), text)


def without_dots(text: str) -> str:
    """Each dots line blank (its when clauses' metavariables are uses, not bindings)."""
    return DOTS_LINE.sub(lambda m: " " * len(m.group(0)), text)


def as_runs(text: str) -> str:
    """The i-th dots line as the run ``$$$__dots<i>;``, for the matcher and the renderer
    (a template's ``...`` writes the anchor's skipped statements back)."""
    count = iter(range(1 << 30))
    return DOTS_LINE.sub(lambda m: f"{m.group(1)}$$${RUN_PREFIX}{next(count)};", text)


def has_dots(text: str) -> bool:
    return DOTS_LINE.search(text) is not None
