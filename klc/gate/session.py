"""What outlives a job in a gate worker (``Session``): the device and its SOL figures, the
loaded modules by cubin hash, and the reference's verify outputs (``OutputCache`` on the
host, ``DeviceOutputCache`` on the GPU). A one-shot child has a session too, used once."""

from __future__ import annotations

import contextlib
import hashlib
import os
import zlib
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from klc.gate.device import CudaDevice
from klc.gate.verify import checksum_in_place


class OutputCache:
    """The reference's verify outputs (host copies, read-only, with a checksum) by key,
    least recently used first out when over ``max_bytes``."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.entries: OrderedDict[str, tuple[dict[str, np.ndarray], dict[str, int]]] = \
            OrderedDict()
        self.bytes = 0

    @staticmethod
    def _sum(a: np.ndarray) -> int:
        return zlib.adler32(np.ascontiguousarray(a).view(np.uint8).data)

    def get(self, key: str) -> dict[str, np.ndarray] | None:
        entry = self.entries.get(key)
        if entry is None:
            return None
        arrays, sums = entry
        if any(self._sum(a) != sums[n] for n, a in arrays.items()):
            self._drop(key)  # changed behind our back: never trust it again
            return None
        self.entries.move_to_end(key)
        return arrays

    def put(self, key: str, arrays: dict[str, np.ndarray]) -> None:
        size = sum(a.nbytes for a in arrays.values())
        if size > self.max_bytes:
            return
        kept = {}
        for n, a in arrays.items():
            c = np.array(a, copy=True)
            c.flags.writeable = False
            kept[n] = c
        if key in self.entries:
            self._drop(key)
        self.entries[key] = (kept, {n: self._sum(a) for n, a in kept.items()})
        self.bytes += size
        while self.bytes > self.max_bytes:
            self._drop(next(iter(self.entries)))

    def _drop(self, key: str) -> None:
        arrays, _ = self.entries.pop(key)
        self.bytes -= sum(a.nbytes for a in arrays.values())

    def __len__(self) -> int:
        return len(self.entries)


class DeviceOutputCache:
    """The reference's outputs at the profiling size, kept on the device between jobs (the
    one thing a job leaves there), by key, least recently used first out when over
    ``max_bytes``. Each entry carries position-weighted checksums of its bytes, taken when it
    was kept and checked before every use: a candidate that wrote far outside its buffers
    and reached one makes the checksum differ, the entry is dropped, the reference runs
    again."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.entries: OrderedDict[str, tuple[dict[str, Any], dict[str, tuple[int, int]]]] = \
            OrderedDict()
        self.bytes = 0
        self.dropped_damaged = 0

    def get(self, xp: Any, key: str) -> dict[str, Any] | None:
        entry = self.entries.get(key)
        if entry is None:
            return None
        arrays, sums = entry
        if any(checksum_in_place(xp, a) != sums[n] for n, a in arrays.items()):
            self._drop(key)
            self.dropped_damaged += 1
            return None
        self.entries.move_to_end(key)
        return arrays

    def put(self, xp: Any, key: str, arrays: dict[str, Any]) -> bool:
        """Keep ``arrays`` (the caller's own copies, not to be written again); False when
        they are over the budget."""
        size = sum(int(a.nbytes) for a in arrays.values())
        if size > self.max_bytes:
            return False
        if key in self.entries:
            self._drop(key)
        while self.entries and self.bytes + size > self.max_bytes:
            self._drop(next(iter(self.entries)))
        self.entries[key] = (dict(arrays),
                             {n: checksum_in_place(xp, a) for n, a in arrays.items()})
        self.bytes += size
        return True

    def _drop(self, key: str) -> None:
        arrays, _ = self.entries.pop(key)
        self.bytes -= sum(int(a.nbytes) for a in arrays.values())

    def __len__(self) -> int:
        return len(self.entries)


MAX_MODULES = 64
REFERENCE_CACHE_BYTES = int(os.environ.get("KLC_GATE_REFERENCE_CACHE_MB", "512")) << 20
DEVICE_REFERENCE_CACHE_BYTES = int(
    os.environ.get("KLC_GATE_DEVICE_REFERENCE_CACHE_MB", "4096")) << 20
# the check at the profiling size runs only when its buffers (twice the inputs, the outputs
# once more for the reference's copy) fit this fraction of the device's free memory
PROFILE_SIZE_MEMORY_FRACTION = 0.7


class Session:
    """The device state a worker keeps between jobs: the device, its description and SOL
    figures, loaded modules by cubin hash, the reference's verify outputs. A one-shot child
    has a session too, used once."""

    def __init__(self, make_device: Callable[[], Any] = CudaDevice,
                 reference_cache_bytes: int = REFERENCE_CACHE_BYTES,
                 device_reference_cache_bytes: int = DEVICE_REFERENCE_CACHE_BYTES):
        self.make_device = make_device
        self.device: Any = None
        self.info: dict[str, Any] | None = None
        self.figures: dict[str, Any] | None = None
        self.modules: OrderedDict[str, tuple[Any, str]] = OrderedDict()
        self.outputs = OutputCache(reference_cache_bytes)
        self.device_outputs = DeviceOutputCache(device_reference_cache_bytes)
        self.jobs = 0

    def start(self) -> dict[str, Any]:
        if self.device is None:
            self.device = self.make_device()
        if self.info is None:
            self.info = self.device.info()
        return self.info

    def module(self, cubin: str) -> tuple[Any, str]:
        """(module, cubin sha256), loaded once per cubin path and content."""
        cached = self.modules.get(cubin)
        if cached is not None:
            with contextlib.suppress(OSError):
                if hashlib.sha256(Path(cubin).read_bytes()).hexdigest() == cached[1]:
                    self.modules.move_to_end(cubin)
                    return cached
        loaded = self.device.load(cubin)
        self.modules[cubin] = loaded
        while len(self.modules) > MAX_MODULES:
            self.modules.popitem(last=False)
        return loaded

    def sol_figures(self, peaks_cubin: str | None) -> dict[str, Any]:
        if self.figures is None:
            assert self.info is not None
            self.figures = self.device.figures(self.info, peaks_cubin)
            return self.figures
        return {**self.figures, "cached": True}

