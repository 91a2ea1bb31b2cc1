"""Hole fillers: the search tuner (``klc.fill.search``, the default) and the LLM filler
(``klc.fill.llm``), over the trial (``klc.fill.trial``: where a skill applies, in which order,
and the static rewrite-and-compile checks of a proposal) and the card's numbers
(``klc.fill.card``).

A filler proposes hole values for one skill at one site; it never writes code. Every value it
proposes is untrusted: the caller validates it again against the hole's declaration
(:meth:`klc.rule.HoleDecl.validate`) before any rewrite, and every candidate goes through
the gate. A filler sees what was tried before at the same site (``FillRequest.history``) so that
it never proposes the same values twice and can learn from the measured times.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from klc.cuda.model import Unit
    from klc.pipeline import Site
    from klc.rule.model import Rule


@dataclass(frozen=True)
class Trial:
    """One gate trial of a skill at a site: the hole values and what the gate said."""

    values: dict[str, str]  # hole name -> value, as text (the form ``--hole k=v`` takes)
    ok: bool  # passed compile + verify (+ profile)
    median_ms: float | None = None  # profiled time, when it passed and was timed
    reason: str = ""  # why it failed, when it did


@dataclass
class FillRequest:
    """What a filler may look at: the skill, the matched site, the kernel, its spec."""

    rule: Rule
    site: Site  # the match and its verdict (klc.pipeline.find_sites)
    unit: Unit  # the kernel being optimized
    spec: Any | None = None  # its kernel spec (klc.spec.load_spec), None without one
    history: list[Trial] = field(default_factory=list)  # earlier trials here, in order
    budget: int = 1  # gate trials the caller can still spend on this site
    baseline_ms: float | None = None  # the current kernel's time, when known


class Filler(Protocol):
    """Proposes hole values. ``propose`` returns up to ``k`` assignments (hole name -> text),
    none of them already in ``req.history``; an empty list means it has nothing more to try.
    A rule without holes gets ``[{}]`` once."""

    name: str

    def propose(self, req: FillRequest, k: int) -> list[dict[str, str]]: ...

    def usage(self) -> dict[str, int]:
        """What the filler spent, e.g. ``{"requests": 3, "prompt_tokens": 900,
        "completion_tokens": 60}`` for the LLM, ``{"proposed": 12}`` for search."""
        ...
