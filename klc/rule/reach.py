"""What a rule's rewrite changes (``reach``): whether a skill is *structural* (it changes
how the work maps to threads, the iteration space, the memory layout or the launch) or
*cheap* (qualifiers, attributes, pragmas, a faster intrinsic, a wider access at the same
place). It is read from the rule itself, never from its name, by comparing the code each
edit writes (``Edit.templates()``) with the code the rule matched (its anchor; for a
``rewrite within`` block, the sub-rule's anchor and replacement, recursively); the aspects
are described in ``klc.optimize.headroom``, which ranks skills by it, and ``klc list``
orders its listing by it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from klc.rule.model import Rule

_COMMENTS = re.compile(r"//[^\n]*|/\*[\s\S]*?\*/|\"(?:[^\"\\\n]|\\.)*\"")
_THREAD_WORDS = re.compile(
    r"\b(threadIdx|blockIdx|blockDim|gridDim|warpSize|__shfl\w*|__ballot_sync|__any_sync|"
    r"__all_sync|__match\w*_sync|__reduce_\w+_sync|__activemask|__syncthreads\w*|__syncwarp|"
    r"atomic\w+)\b")
_LOOP = re.compile(r"\b(for|while)\s*\(")
_SHARED = re.compile(r"__shared__[^;{]*;")


@dataclass(frozen=True)
class Reach:
    """What a rule's rewrite changes: the structural aspects (``launch``, ``threads``,
    ``loops``, ``shared memory``), empty for a cheap skill."""

    aspects: tuple[str, ...] = ()

    @property
    def structural(self) -> bool:
        return bool(self.aspects)

    def describe(self) -> str:
        return ("structural (" + ", ".join(self.aspects) + ")") if self.aspects else "cheap"


def _code(text: str) -> str:
    return _COMMENTS.sub(" ", text)


def _balanced(text: str, start: int) -> str:
    """The text of the parenthesized group opening at ``start`` (``(`` included)."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    return text[start:]


def _features(text: str) -> dict[str, list[str]]:
    code = _code(text)
    loops = [m.group(1) + " ".join(_balanced(code, m.end() - 1).split())
             for m in _LOOP.finditer(code)]
    return {"threads": sorted(m.group(1) for m in _THREAD_WORDS.finditer(code)),
            "loops": sorted(loops),
            "shared memory": sorted(" ".join(m.group(0).split())
                                    for m in _SHARED.finditer(code))}


def _differs(before: Sequence[str], after: Sequence[str]) -> list[str]:
    b, a = _merge(_features(t) for t in before), _merge(_features(t) for t in after)
    return [k for k in b if b[k] != a[k]]


def _merge(parts: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"threads": [], "loops": [], "shared memory": []}
    for p in parts:
        for k, v in p.items():
            out[k] += v
    return {k: sorted(v) for k, v in out.items()}


def reach(rule: Rule) -> Reach:
    """What the rule's rewrite changes (module doc): read from its edits and templates."""
    found: list[str] = []

    def visit(r: Rule) -> None:
        if any(e.changes_launch for e in r.edits):
            found.append("launch")
        written = [t for e in r.edits for t in e.templates()]
        if written:  # an anchor swap (replace) against the anchor; code inserted or removed
            swaps = any(e.leads for e in r.edits)  # beside it counts in full
            befores = [[a] for a in (r.anchors or (r.anchor,))] if swaps else [[]]
            for before in befores:  # anchor any: what any branch's rewrite changes
                found.extend(_differs(before, written))
        for e in r.edits:
            for sub in e.subrules():
                visit(sub)

    visit(rule)
    order = ("launch", "threads", "loops", "shared memory")
    return Reach(tuple(a for a in order if a in found))


def structural(rule: Rule) -> bool:
    """Whether the rule changes how work maps to threads, the iteration space, the memory
    layout or the launch (module doc)."""
    return reach(rule).structural
