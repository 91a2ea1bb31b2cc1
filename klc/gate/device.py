"""The child side of the gate, on the device: everything the job runner does on the GPU goes
through ``CudaDevice`` (CuPy), so that tests can run the runner on a fake device."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from klc.gate import sol
from klc.gate.profile import l2_flusher
from klc.gate.verify import launch


class CudaDevice:
    """The GPU through CuPy: everything the job runner does on the device goes through here
    (the tests stand in a NumPy device with Python kernels)."""

    name = "cuda"

    def __init__(self) -> None:
        import cupy as cp

        self.cp = cp
        self.xp = cp
        self.errors: tuple[type[BaseException], ...] = (cp.cuda.runtime.CUDARuntimeError,
                                                        cp.cuda.driver.CUDADriverError)
        self._philox: bool | None = None

    def info(self) -> dict[str, Any]:
        return sol.device_info()

    def figures(self, info: dict[str, Any], peaks_cubin: str | None) -> dict[str, Any]:
        return sol.load_or_measure(info, peaks_cubin)

    def load(self, cubin: str) -> tuple[Any, str]:
        """The module and the sha256 of its cubin."""
        data = Path(cubin).read_bytes()
        return self.cp.RawModule(path=cubin), hashlib.sha256(data).hexdigest()

    def function(self, module: Any, lowered: str, dynamic_smem: int) -> Any:
        fn = module.get_function(lowered)
        if dynamic_smem > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = dynamic_smem
        return fn

    def launch(self, fn: Any, cfg: dict[str, Any], args: list[Any]) -> None:
        launch(fn, cfg, args)

    def sync(self) -> None:
        self.cp.cuda.Device().synchronize()

    def to_host(self, a: Any) -> np.ndarray:
        return self.cp.asnumpy(a)

    def to_device(self, a: np.ndarray) -> Any:
        return self.cp.asarray(a)

    def draw(self, seed: int) -> Any:
        """cuRAND's Philox generator seeded with ``seed``, or None when cuRAND cannot be
        loaded here (the inputs are then made on the host)."""
        if self._philox is None:
            try:
                self._rng(1).normal(2, np.dtype(np.float32))
                self.sync()
                self._philox = True
            except self.errors:
                raise
            except Exception:  # no cuRAND library: host data
                self._philox = False
        return self._rng(seed) if self._philox else None

    def _rng(self, seed: int) -> Any:
        cp = self.cp

        class _Philox:
            xp = cp

            def __init__(self) -> None:
                from cupy_backends.cuda.libs import curand

                self.rs = cp.random.RandomState(seed, method=curand.CURAND_RNG_PSEUDO_PHILOX4_32_10)

            def normal(self, count: int, work: np.dtype) -> Any:
                return self.rs.standard_normal(count, dtype=work)

            def uniform(self, lo: float, hi: float, count: int, work: np.dtype) -> Any:
                return self.rs.uniform(lo, hi, count, dtype=work)

            def integers(self, lo: int, hi: int, count: int) -> Any:
                return self.rs.randint(lo, hi, count, dtype=np.int64)

        return _Philox()

    def flusher(self, l2_bytes: int, footprint: int) -> Callable[[], None] | None:
        return l2_flusher(l2_bytes, footprint)

    def time_calls(self, calls: list[Callable[[], None]],
                   flush: Callable[[], None] | None) -> list[float]:
        """Each call between its own pair of events (after a flush); one sync at the end."""
        cp = self.cp
        stream = cp.cuda.get_current_stream()
        events = []
        for call in calls:
            if flush is not None:
                flush()
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record(stream)
            call()
            end.record(stream)
            events.append((start, end))
        if not events:
            return []
        events[-1][1].synchronize()
        return [float(cp.cuda.get_elapsed_time(s, e)) for s, e in events]

    def free_memory(self) -> int:
        """Bytes the job may still allocate: the driver's free memory plus what CuPy's pool
        holds unused."""
        free, _ = self.cp.cuda.runtime.memGetInfo()
        pool = self.cp.get_default_memory_pool()
        return int(free + pool.total_bytes() - pool.used_bytes())

    def release(self) -> None:
        """Give the job's device memory back (the next job allocates its own)."""
        self.cp.get_default_memory_pool().free_all_blocks()
        self.cp.get_default_pinned_memory_pool().free_all_blocks()
