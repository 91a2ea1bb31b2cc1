"""Retry memory: the trials of each target, and which of them a filler must not be asked
to propose again on the current version (:mod:`klc.optimize`, "A filler's history")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from klc.fill import Trial
    from klc.optimize.targets import Target


@dataclass
class Entry:
    """One trial of a target, with the version and the code it ran on."""

    base: str  # sha of the version the trial rewrote
    text: str  # sha of the site's matched text
    func: str  # sha of the enclosing function's text in that version
    single: bool  # the rule matched once in that function
    trial: Trial
    outcome: str


class RetryMemory:
    """Every trial by target key; ``split`` names the rules whose all-sites candidate
    failed (their sites are tried one by one from then on)."""

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str, int], list[Entry]] = {}
        self.split: set[str] = set()

    def remember(self, base: str, target: Target, trial: Trial, outcome: str) -> None:
        """Record a trial of ``target`` on the version whose sha is ``base``."""
        self.entries.setdefault(target.key, []).append(
            Entry(base, target.text, target.func, target.single, trial, outcome))
        if target.group > 1 and outcome == "failed":
            self.split.add(target.rule.name)  # one site may be wrong where others are fine

    def history(self, target: Target, base: str, retry: bool = False) -> list[Trial]:
        """The trials the filler must not propose again at ``target`` on version ``base``
        (:mod:`klc.optimize`). With ``retry``, the passed-but-not-faster trials of earlier
        versions whose function has changed since are left out (proposable again)."""
        out = []
        func = target.func
        for e in self.entries.get(target.key, []):
            same_site = e.text == target.text or (target.single and e.single)
            if not same_site:
                continue
            if e.base == base:
                out.append(e.trial)
            elif e.outcome == "failed":
                if e.text == target.text:  # the site's code is what failed: still excluded
                    out.append(e.trial)
            elif e.outcome in ("neutral", "slower") and (not retry or e.func == func):
                out.append(e.trial)
        return out

    def retryable(self, target: Target, base: str) -> bool:
        """Whether a retry would offer the filler something the plain history does not."""
        return len(self.history(target, base, retry=True)) < len(self.history(target, base))
