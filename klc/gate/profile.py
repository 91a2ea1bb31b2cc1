"""Stage 3 of the gate: time kernels with CUDA events (inside the child process).

The candidate is timed twice (two series, ``candidate`` and ``candidate (again)``: how far
their medians differ is the noise) and the reference once, all in **rounds**: each round
launches one run of every series that still needs runs, ``candidate, reference, candidate
(again)``, so that the ratio of the medians is measured under the same conditions (clocks,
temperature, other work on the device) whatever drifts during the trial. Each run sits
between its own pair of events, after an L2 flush when the kernel's buffers are small enough
to stay in the cache between runs: what is measured is the kernel reading device memory,
not the cache warmed by the previous run.

A series stops when it has ``min_runs`` runs and either ``target_s`` of kernel time or
``max_runs`` runs (``Budget``). Warm-up runs (module load, first touch, clocks ramping) come
first and are not counted. The median is the figure; p10/p90 give the spread.

A persistent gate worker times the reference of a trial series once: later trials get that
timing back (``cached``) and run only ``check_runs`` interleaved runs of the reference; when
their median has drifted from the cached one beyond the tolerance (``drift``), the reference
becomes a full series again in that trial and its new timing replaces the cached one.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from klc.errors import KlcError

FLUSH_BELOW = 3  # flush the L2 before each run when the footprint is under 3x its size
DRIFT_FLOOR = 0.01  # a cached reference is used while a fresh check is within 1% of it ...
BATCH_ROUNDS = 10  # rounds launched between two synchronisations


@dataclass(frozen=True)
class Budget:
    """How long each series is timed (see the module doc)."""

    warmup: int = 3
    target_s: float = 0.15
    max_runs: int = 200
    min_runs: int = 10
    check_runs: int = 10

    def __post_init__(self) -> None:
        if self.warmup < 0 or self.min_runs < 2 or self.check_runs < 2:
            raise KlcError(f"profile budget {self}: warm-up must be >= 0, min_runs and "
                           "check_runs >= 2")
        if self.max_runs < self.min_runs or not self.target_s > 0:
            raise KlcError(f"profile budget {self}: max_runs must be >= min_runs and "
                           "target_s > 0")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Budget:
        return cls(**data) if data else cls()


@dataclass
class Timing:
    median_ms: float
    min_ms: float
    p10_ms: float
    p90_ms: float
    runs: int
    flushed_l2: bool

    @property
    def spread(self) -> float:
        """(p90 - p10) / median: how much one run can differ from the next."""
        return (self.p90_ms - self.p10_ms) / self.median_ms if self.median_ms > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {**vars(self), "spread": self.spread}


def summarize(times_ms: list[float], flushed: bool) -> Timing:
    s = sorted(times_ms)
    q = statistics.quantiles(s, n=10, method="inclusive") if len(s) >= 2 else [s[0]] * 9
    return Timing(statistics.median(s), s[0], q[0], q[-1], len(s), flushed)


@dataclass
class Series:
    """The runs of one kernel in one trial. ``mode`` is "full" (timed to the budget),
    "check" (a cached reference: ``check_runs`` runs, then judged) or "checked"."""

    label: str
    mode: str = "full"
    times: list[float] = field(default_factory=list)

    def needed(self, budget: Budget) -> int:
        """How many more runs this series wants (0: done)."""
        n = len(self.times)
        if self.mode == "check":
            return max(0, budget.check_runs - n)
        if self.mode == "checked" or n >= budget.max_runs:
            return 0
        if n < budget.min_runs:
            return budget.min_runs - n
        spent_s = sum(self.times) * 1e-3
        if spent_s >= budget.target_s:
            return 0
        per_run = spent_s / n
        more = math.ceil((budget.target_s - spent_s) / per_run - 1e-9) if per_run > 0 else \
            budget.max_runs
        return max(1, min(budget.max_runs - n, more))


def run_rounds(series: list[Series], time_batch: Callable[[list[str]], list[float]],
               budget: Budget, judge_check: Callable[[Series], bool] | None = None) -> None:
    """Time ``series`` in interleaved rounds until each has what it needs.

    ``time_batch(labels)`` launches one run per label, in that order, each between its own
    events, and returns their times in ms. ``judge_check(series)`` is called once a "check"
    series has its runs: True sends it on as a full series (the cached timing drifted)."""
    if budget.warmup:
        time_batch([s.label for _ in range(budget.warmup) for s in series])
    while True:
        need = {s.label: s.needed(budget) for s in series}
        rounds = min(BATCH_ROUNDS, max(need.values(), default=0))
        if rounds <= 0:
            return
        order = [s for i in range(rounds) for s in series if i < need[s.label]]
        times = time_batch([s.label for s in order])
        if len(times) != len(order):
            raise RuntimeError(f"timed {len(times)} runs, launched {len(order)}")
        for s, t in zip(order, times, strict=True):
            s.times.append(t)
        for s in series:
            if s.mode == "check" and len(s.times) >= budget.check_runs:
                s.mode = "full" if judge_check is not None and judge_check(s) else "checked"


def drift(cached: dict[str, Any], check_ms: list[float]) -> tuple[float, float]:
    """(relative difference of the check's median from the cached median, tolerance).

    The tolerance is ``DRIFT_FLOOR`` or about two standard errors of the check's median,
    whichever is larger: (p90 - p10) is about 2.56 sigma, the median of n runs has a
    standard error of about 1.25 sigma / sqrt(n)."""
    median = statistics.median(check_ms)
    base = float(cached["median_ms"])
    rel = (median - base) / base if base > 0 else math.inf
    tol = max(DRIFT_FLOOR, float(cached.get("spread") or 0.0) / math.sqrt(len(check_ms)))
    return rel, tol


def noise(a_ms: float, b_ms: float) -> float:
    """How far the candidate's two medians differ, relative to the smaller."""
    low = min(a_ms, b_ms)
    return abs(a_ms - b_ms) / low if low > 0 else 0.0


def l2_flusher(l2_bytes: int, footprint_bytes: int) -> Callable[[], None] | None:
    """A function that evicts the L2 cache by writing a buffer twice its size, or None when
    the kernel's buffers are already ``FLUSH_BELOW`` times the cache (they cannot stay in
    it)."""
    import cupy as cp

    if footprint_bytes >= FLUSH_BELOW * l2_bytes:
        return None
    scratch = cp.empty(max(2 * l2_bytes, 1 << 20) // 4, dtype=cp.int32)

    def flush() -> None:
        scratch.fill(1)

    return flush
