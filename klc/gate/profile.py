"""Stage 3 of the gate: time a kernel with CUDA events (inside the child process).

Each timed run is bracketed by its own pair of events, after a flush of the L2 cache when the
kernel's buffers are small enough to stay in it between runs: what is measured is the kernel
reading device memory, not the cache warmed by the previous run. Warm-up runs first (module
load, first-touch, clocks ramping), then at least ``MIN_RUNS`` timed runs, more for short
kernels, up to a time budget. The median is the figure; p10/p90 give the spread.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MIN_RUNS = 20
MAX_RUNS = 500
WARMUP_RUNS = 5
TARGET_SECONDS = 0.5  # timed runs per series stop adding once this much kernel time is spent


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


def time_kernel(run: Callable[[], None], *, flush: Callable[[], None] | None,
                min_runs: int = MIN_RUNS) -> Timing:
    """Time ``run`` (one kernel launch) with CUDA events: warm-up, then enough runs."""
    import cupy as cp

    stream = cp.cuda.get_current_stream()
    for _ in range(WARMUP_RUNS):
        if flush is not None:
            flush()
        run()
    stream.synchronize()
    times: list[float] = []
    spent = 0.0
    while len(times) < MAX_RUNS and (len(times) < min_runs or spent < TARGET_SECONDS * 1e3):
        batch = []
        for _ in range(10):
            if flush is not None:
                flush()
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record(stream)
            run()
            end.record(stream)
            batch.append((start, end))
        end.synchronize()
        for s, e in batch:
            t = cp.cuda.get_elapsed_time(s, e)
            times.append(t)
            spent += t
    return summarize(times, flush is not None)


def l2_flusher(l2_bytes: int, footprint_bytes: int) -> Callable[[], None] | None:
    """A function that evicts the L2 cache by writing a buffer twice its size, or None when
    the kernel's buffers are already over three times the cache (they cannot stay in it)."""
    import cupy as cp

    if footprint_bytes >= 3 * l2_bytes:
        return None
    scratch = cp.empty(max(2 * l2_bytes, 1 << 20) // 4, dtype=cp.int32)

    def flush() -> None:
        scratch.fill(1)

    return flush
