"""The matcher: a compiled anchor pattern against a unit's tree -> matches with bindings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tree_sitter import Node

if TYPE_CHECKING:
    from klc.frontend import Function, Unit
    from klc.rules import Rule


@dataclass(frozen=True)
class Binding:
    """What a metavariable bound: one node (``$X``), a run of sibling nodes (``$$$X``), or a
    fragment of a token's text (a metavariable inside a ``#pragma`` line)."""

    name: str
    start: int
    end: int
    text: str  # the original source text of the span
    nodes: tuple[Node, ...] = field(default=(), compare=False, repr=False)

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

    @property
    def line_col(self) -> tuple[int, int]:
        return self.unit.position(self.start)
