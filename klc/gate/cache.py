"""Gate results kept on disk, so that a re-run or a resumed run never pays for a trial twice.

A gate trial costs seconds of GPU time (a child process, verify on several seeds, three timed
series); the same candidate against the same reference on the same device gives the same
verdict. So a finished record (``passed`` or ``failed``) is stored as its JSON under the
sha256 of everything that decides it:

    candidate source, reference source, arch, gate stages, klc version, device name

(the device is part of the key because a record holds times, and an H100's times are not an
H200's). Records that did not decide anything (``compiled``: no GPU; ``skipped``) are never
stored: on a machine with a GPU the trial must run. Calls with explicit seeds (an independent
re-verification) are not cached either: their point is to run again.

Entries live in ``$KLC_CACHE_DIR/gate`` (default ``~/.cache/klc/gate``), one JSON file per key,
written atomically (temporary file, then rename), so a crash or two optimizers sharing the
folder never leave half an entry; a damaged entry reads as a miss and is overwritten.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from klc import __version__
from klc.errors import KlcError
from klc.fsutil import atomic_write
from klc.gate import STAGES, GateRecord, StageResult
from klc.gate.compile import cache_dir

GateFn = Callable[..., GateRecord]
CACHED_VERDICTS = frozenset({"passed", "failed"})
_STAGE_KEYS = frozenset({"status", "reason"})


def default_dir() -> Path:
    return cache_dir() / "gate"


def record_from_json(data: dict[str, Any]) -> GateRecord:
    """Rebuild a GateRecord from ``GateRecord.to_json()`` (the inverse, field for field)."""
    stages = {}
    for name, st in data.get("stages", {}).items():
        body = {k: v for k, v in st.items() if k not in _STAGE_KEYS}
        stages[name] = StageResult(st.get("status", "skipped"), st.get("reason", ""), body)
    return GateRecord(
        path=data["path"], kernel=data.get("kernel"), source_hash=data["source_hash"],
        reference_path=data.get("reference_path"), reference_hash=data.get("reference_hash"),
        arch=data["arch"], options=tuple(data.get("options", ())), device=data.get("device"),
        stages=stages, verdict=data.get("verdict", "skipped"), reason=data.get("reason", ""),
        elapsed_s=float(data.get("elapsed_s", 0.0)))


def cache_key(candidate: bytes, reference: bytes | None, arch: str,
              stages: Iterable[str], version: str, device: str | None) -> str:
    """sha256 over the parts that decide a gate record, each length-prefixed (no two
    different tuples of parts hash the same byte stream)."""
    h = hashlib.sha256()
    parts: list[bytes] = [b"klc-gate-cache/1", candidate,
                          reference if reference is not None else b"\0<none>",
                          arch.encode(), ",".join(stages).encode(), version.encode(),
                          (device or "").encode()]
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.hexdigest()


@dataclass
class GateCache:
    """A folder of gate records by key (see the module doc)."""

    root: Path

    @classmethod
    def open(cls, root: str | Path | None = None) -> GateCache:
        return cls(Path(root) if root is not None else default_dir())

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> GateRecord | None:
        path = self._path(key)
        try:
            data = json.loads(path.read_text())
            return record_from_json(data["record"])
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing or damaged: a miss

    def put(self, key: str, record: GateRecord, meta: dict[str, Any] | None = None) -> bool:
        """Store a decided record; returns False (and stores nothing) for one that decided
        nothing, or when the folder cannot be written (a cache must never fail a run)."""
        if record.verdict not in CACHED_VERDICTS:
            return False
        path = self._path(key)
        payload = json.dumps({"key": key, "meta": meta or {}, "record": record.to_json()})
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, payload.encode())
        except (OSError, KlcError):
            return False
        return True

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json")) if self.root.is_dir() else 0


def device_name() -> str | None:
    """Device 0's name ("NVIDIA H200"), or None without a GPU."""
    try:
        import cupy

        name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    except Exception:  # no driver, no device: no name
        return None
    return name.decode() if isinstance(name, bytes) else str(name)


@dataclass
class CachedGate:
    """``gate`` with the cache in front: ``run`` returns (record, hit)."""

    cache: GateCache | None
    gate_fn: GateFn
    arch: str
    device: str | None
    stages: tuple[str, ...] = STAGES

    def run(self, candidate: bytes, path: str, *, reference: bytes | None,
            reference_path: str | None, seeds: Iterable[int] | None = None
            ) -> tuple[GateRecord, bool]:
        use = self.cache is not None and seeds is None
        key = cache_key(candidate, reference, self.arch, self.stages, __version__, self.device)
        if use:
            hit = self.cache.get(key)  # type: ignore[union-attr]
            if hit is not None:
                return hit, True
        record = self.gate_fn(candidate, path, reference=reference,
                              reference_path=reference_path, arch=self.arch,
                              stages=self.stages, seeds=seeds)
        if use:
            self.cache.put(key, record, {"path": path, "reference_path": reference_path})  # type: ignore[union-attr]
        return record, False
