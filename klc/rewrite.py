"""The use case "apply these rules to this unit", in one place: ``klc apply``, ``klc batch``
and the Python API (``klc.api.apply``) call :func:`apply_unit` and print what it returns
with :meth:`Applied.diff`, so the same change reads the same everywhere.

It runs the pipeline once (``klc.pipeline.apply_rules``: every applicable site once, the
result re-parsed) under the unit's klc-spec, and returns the outcome with what each face
shows of it: the sites rewritten (rule, line, column, function, holes), the matches refused
and the first one's reason, the notes (the pipeline's, then each applicable site left for
another run), and the unified diff, with the rules that made each hunk when asked
(``annotate``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from klc.content import unified_diff

if TYPE_CHECKING:
    from klc.cuda.model import Unit
    from klc.pipeline import Outcome, Site
    from klc.rule import Rule

_UNREAD = object()


@dataclass(frozen=True)
class RewriteSite:
    """One site a rule rewrote."""

    rule: str
    line: int
    col: int
    function: str
    holes: dict[str, str]
    # the original's lines its byte edits touch (first, last), for the diff's labels
    lines: tuple[tuple[int, int], ...] = field(default=(), compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "line": self.line, "col": self.col,
                "holes": dict(self.holes)}


@dataclass
class Applied:
    """What applying rules to a unit did (module doc)."""

    unit: Unit
    outcome: Outcome
    sites: list[RewriteSite]

    @property
    def changed(self) -> bool:
        return self.outcome.changed

    @property
    def source(self) -> bytes:
        return self.outcome.source

    @property
    def refused(self) -> list[Site]:
        return self.outcome.refused

    @property
    def left_for_later(self) -> list[str]:
        """A note per applicable site this run left for another (it overlaps one rewritten,
        or it read a declaration another site rewrites)."""
        return [f"{self.unit.where(site.match.start)}: {site.rule.name}: not applied in this "
                f"run: {why}" for site, why in self.outcome.skipped]

    @property
    def notes(self) -> list[str]:
        """The pipeline's notes, then the sites left for another run."""
        return [*self.outcome.notes, *self.left_for_later]

    def refusal(self) -> str:
        """The first refused match and its reason, with how many more were refused ("" when
        none was)."""
        if not self.refused:
            return ""
        first, more = self.refused[0], len(self.refused) - 1
        return (f"{self.unit.where(first.match.start)}: {first.rule.name}: {first.reason}"
                + (f" (and {more} more refused)" if more else ""))

    def diff(self, path: str | None = None, *, annotate: bool = False) -> str:
        """The unified diff of the change ("" when nothing changed); ``annotate``: each hunk
        says which rules made it."""
        if not self.changed:
            return ""
        return unified_diff(self.unit.source, self.source, path or self.unit.path,
                            label=self._label if annotate else None)

    def _label(self, first: int, last: int) -> str:
        last = max(first, last)
        found = sorted((a, s.rule) for s in self.sites for a, b in s.lines
                       if a <= last and first <= b)  # in the order of the lines they change
        names = list(dict.fromkeys(name for _, name in found))
        return "klc: " + ", ".join(names) if names else ""


def apply_unit(unit: Unit, rules: list[Rule], holes: dict[str, str] | None = None, *,
               spec: Any = _UNREAD, clang: bool = True) -> Applied:
    """Apply every applicable site of ``rules`` to ``unit`` once (hole values validated
    against their declarations; a hole not given takes its default). ``spec``: the unit's
    klc-spec, read from it when not given (a malformed block is a KlcError). A rewrite that
    would not parse raises KlcError; nothing is written."""
    from klc.pipeline import apply_rules, spec_of

    if spec is _UNREAD:
        spec = spec_of(unit)
    outcome = apply_rules(unit, rules, dict(holes or {}), spec, clang=clang)
    sites = []
    for rw in outcome.applied:
        m = rw.match
        line, col = unit.position(outcome.start_of(rw))
        origin = outcome.origin.get(id(rw))
        if origin is None:  # matched in the original: its edits' lines are the original's
            spans = tuple((unit.position(e.start)[0],
                           unit.position(max(e.start, e.end - 1))[0]) for e in rw.edits)
        else:  # matched in the code an earlier round left: the original site's lines
            first = origin[0].match
            spans = ((unit.position(first.start)[0],
                      unit.position(max(first.start, first.end - 1))[0]),)
        sites.append(RewriteSite(m.rule.name, line, col, m.function.name if m.function
                                 else "", dict(rw.holes), spans))
    return Applied(unit, outcome, sites)
