"""The batch journal: JSON lines, one fsync'd append per finished file, read back by
``--resume``.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klc import __version__
from klc.batch.config import TMP_SUFFIX, FileResult
from klc.batch.walk import Source
from klc.batch.worker import _read, _sha
from klc.errors import KlcError

if TYPE_CHECKING:
    pass

# The journal


class Journal:
    """JSON lines, one fsync'd append per finished file (and per write begun in place).

    A line torn by a kill is ignored on reading; lines of another configuration are
    ignored, so a changed rule or option redoes every file."""

    def __init__(self, path: Path, digest: str) -> None:
        self.path = path
        self.digest = digest
        self.other = 0  # entries of other configurations seen by read()
        self._f: Any = None

    def read(self) -> dict[str, dict[str, Any]]:
        """The last entry of this configuration for each file (keyed by real path)."""
        entries: dict[str, dict[str, Any]] = {}
        if not os.path.lexists(self.path):
            return entries
        from klc.fsutil import read_input  # (a FIFO named as the journal is refused)

        text = read_input(self.path, "journal", limit=1 << 36).decode("utf-8", "replace")
        for line in text.splitlines():
            try:
                doc = json.loads(line)
            except json.JSONDecodeError:
                continue  # torn by a kill mid-append
            if not isinstance(doc, dict) or "key" not in doc:
                continue
            if doc.get("config") == self.digest:
                entries[doc["key"]] = doc
            else:
                self.other += 1
        return entries

    def open(self, fresh: bool) -> None:
        """Open for appending, under an exclusive advisory lock held until ``close``: a second
        batch on the same journal stops here, before it touches any file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if os.path.lexists(self.path) and not self.path.is_file():
                raise KlcError(f"{self.path}: the journal path is not a regular file")
            self._f = open(self.path, "ab")  # noqa: SIM115 (held open for the batch)
            self._lock()
            if fresh:  # truncated in place: the lock stays on this file
                self._f.truncate(0)
                self._f.write((json.dumps({"journal": "klc batch", "klc": __version__,
                                           "config": self.digest}) + "\n").encode())
                self._f.flush()
                os.fsync(self._f.fileno())
            if self._f.tell() > 0:
                with open(self.path, "rb") as f:
                    f.seek(-1, os.SEEK_END)
                    if f.read(1) != b"\n":
                        self._f.write(b"\n")  # end the line a kill tore
        except OSError as e:
            self.close()
            raise KlcError(f"{self.path}: cannot write the journal: {e.strerror or e}") from None
        except BaseException:
            self.close()
            raise

    def _lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # not a POSIX system: no lock
            return
        try:
            fcntl.flock(self._f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise KlcError(f"{self.path}: another klc batch is running with this journal "
                               "(it holds the journal's lock); wait for it to end, or give "
                               "another --journal") from None
            # a file system without locks: go on unlocked

    def append(self, doc: dict[str, Any]) -> None:
        """One fsync'd line. A failed write (a full disk) stops the batch: every file already
        written is whole and journaled, and --resume continues once there is room."""
        try:
            self._f.write((json.dumps({"config": self.digest, **doc}) + "\n").encode())
            self._f.flush()
            os.fsync(self._f.fileno())
        except OSError as e:
            raise KlcError(f"{self.path}: cannot write the journal: {e.strerror or e}; the "
                           "batch stopped (every file is as it was or completely written; "
                           "run it again with --resume once this is fixed)") from None

    def close(self) -> None:
        if self._f is not None:
            f, self._f = self._f, None
            with contextlib.suppress(OSError):  # (a line a full disk cut is ignored on reading)
                f.close()


def _done_before(entry: dict[str, Any] | None, src: Source, mode: str,
                 journal: Journal) -> FileResult | None:
    """The journaled result of a file when it still holds, else None (redo the file)."""
    if entry is None:
        return None
    try:
        current = _sha(_read(src.path))
    except KlcError:
        return None
    res = FileResult.from_json(entry["result"])
    res.path = src.path
    if mode == "in_place":
        if entry["phase"] == "begin":
            if current != entry["output_sha"]:
                return None  # the write never happened: redo the file
            journal.append({"key": src.real, "phase": "done", "input_sha": entry["input_sha"],
                            "output_sha": entry["output_sha"], "result": entry["result"]})
            return res
        return res if current == entry["output_sha"] else None
    if current != entry["input_sha"]:
        return None
    if src.dest is not None and res.output_sha:
        try:
            if _sha(_read(src.dest)) != res.output_sha:
                return None
        except KlcError:
            return None
    return res


def _sweep_temporaries(folders: Iterable[str]) -> None:
    """Remove the temporary files of writes that a kill interrupted (``.NAME.*.klc-tmp``)."""
    for folder in set(folders):
        with contextlib.suppress(OSError):
            for entry in os.scandir(folder):
                if entry.name.startswith(".") and entry.name.endswith(TMP_SUFFIX):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
