"""What the matcher hands out: ``Binding`` (what a metavariable bound) and ``Match`` (one
place where a rule's anchor matched)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from tree_sitter import Node

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


class SubMatches(Protocol):
    """What the ``rewrite within`` edits of a site's rule matched inside it
    (``klc.edits.within.SubResult``): sub-matches by target metavariable, the refused ones
    with why."""

    matches: dict[str, list[Match]]
    refused: list[tuple[Match, str]]

    @property
    def count(self) -> int: ...


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
    subs: SubMatches | None = None
    # what an isomorphism's spelling obliges (klc.match.iso): Binding(kind, span) pairs whose
    # type the pipeline checks as it checks ``metavar $X: KIND`` (a float for fmaxf, ...)
    obligations: tuple[Binding, ...] = ()
    # the code read in place of the match's own (klc.match.reading: a local's initialiser, a
    # helper's statement), as spans of the unit: a rewrite of them in the same run changes
    # what this match stands for
    reads: tuple[tuple[int, int], ...] = ()

    @property
    def line_col(self) -> tuple[int, int]:
        return self.unit.position(self.start)
