"""What a skill's measurements say, read as numbers: its best measured speedup (the trial's
site ranking and the loop's headroom read it) and the hole values its measured effects and
provenance write (the search filler proposes them early).

The text is the card's measured effects and provenance (``klc.measurements.measured``:
``skills/measurements.json``, or a hand-written card's own lines).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from klc.measurements import measured

if TYPE_CHECKING:
    from klc.rule import HoleDecl, Rule

__all__ = ["card_speedup", "card_text", "card_values"]


def card_text(rule: Rule) -> str:
    """The card's measured effects and provenance, one line each."""
    m = measured(rule)
    return "\n".join((*m.effect, *m.provenance))


def card_speedup(rule: Rule) -> float | None:
    """The best measured speedup the card reports ("measured: 1.31x on H100 ..."), or None."""
    effect = "\n".join(measured(rule).effect)
    found = [float(m) for m in re.findall(r"(\d+(?:\.\d+)?)\s*x\b", effect)]
    return max(found) if found else None


def card_values(rule: Rule, name: str, decl: HoleDecl) -> list[str]:
    """Values of hole ``name`` that the card's measured effects and provenance mention:
    first those written next to the hole's name (``?factor = 8``, ``factor 8``), then, for
    int holes, other whole numbers of the domain (not part of a decimal, a speedup or a
    power like 2^24)."""
    text = card_text(rule)
    named = re.findall(rf"\??\b{re.escape(name)}\b\s*(?:=|:|is|of)?\s*([A-Za-z_0-9]+)", text)
    out = [v for v in named if decl.contains(v)]
    if decl.type == "int":
        # a number written as another hole's value (``?f=2`` for hole ty) says nothing of this one
        others = "|".join(re.escape(n) for n in rule.holes if n != name)
        taken = {m.start(1) for m in re.finditer(rf"\?(?:{others})\s*=\s*(\d+)", text)} \
            if others else set()
        # nor does a walk's step number (``column_split step 2 with ?f=2``)
        taken |= {m.start(1) for m in re.finditer(r"\bsteps? (\d+)\b", text)}
        for m in re.finditer(r"(?<![\w.^])(\d+)(?![\w.^%])", text):
            if decl.contains(m.group(1)) and m.start(1) not in taken:
                out.append(m.group(1))
    seen: list[str] = []
    for v in out:
        if v not in seen:
            seen.append(v)
    return seen
