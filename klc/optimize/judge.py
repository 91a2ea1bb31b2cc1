"""The noise judge: whether a verified trial is faster than the current version, as fast,
or slower, beyond the noise of both timings (:mod:`klc.optimize`, step 3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from klc.optimize.result import TrialLog
    from klc.optimize.targets import Version


@dataclass(frozen=True)
class NoiseJudge:
    """A gain counts when it exceeds ``min_gain`` and the relative noise of every timing
    it compares."""

    min_gain: float

    def threshold(self, *noises: float | None) -> float:
        """The least relative gain that counts between timings with these noises."""
        return max(self.min_gain, *(n or 0.0 for n in noises))

    def judge(self, cur: Version, log: TrialLog) -> str:
        """``failed``, ``improved``, ``neutral`` or ``slower``: the trial against ``cur``,
        both measured as speedups over the original."""
        if log.verdict != "passed":
            return "failed"
        if not log.speedup:
            return "neutral"  # passed, but no time to compare (a gate without profile)
        ratio = log.speedup / cur.speedup
        thr = self.threshold(log.noise, cur.noise)
        if ratio > 1 + thr:
            return "improved"
        return "neutral" if ratio >= 1 - thr else "slower"
