"""The batch journal: JSON lines, one fsync'd append per finished file, read back by
``--resume``.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klc import __version__
from klc.batch.config import ERROR, STATUSES, TMP_SUFFIX, FileResult
from klc.batch.walk import Source
from klc.batch.worker import _read, _sha
from klc.errors import KlcError
from klc.fsutil import kind_of, shown

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
        self.unreadable = 0  # lines read() skipped: not an entry (torn, edited)
        self._f: Any = None

    def check(self) -> None:
        """The checks an output file gets, before the journal is read or written: it is
        never a symbolic link (a link planted in the output folder, or given as --journal,
        would have the journal's lines written over the file it names), nor a FIFO, a
        device or a folder, nor a file with other hard links."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return
        except OSError as e:
            raise KlcError(f"{shown(self.path)}: cannot read the journal: {e.strerror or e}"
                           ) from None
        if stat.S_ISLNK(st.st_mode):
            raise KlcError(f"{shown(self.path)}: the journal is a symbolic link (to "
                           f"{shown(os.readlink(self.path))}); klc writes its journal through "
                           "no link: remove it, or give another --journal")
        if not stat.S_ISREG(st.st_mode):
            raise KlcError(f"{shown(self.path)}: the journal path is {kind_of(st.st_mode)}, "
                           "not a regular file")
        if st.st_nlink > 1:
            raise KlcError(f"{shown(self.path)}: the journal has {st.st_nlink} hard links; "
                           "writing it would change the other names too: remove it, or give "
                           "another --journal")

    def read(self) -> dict[str, dict[str, Any]]:
        """The last entry of this configuration for each file (keyed by real path). A line
        that is not a whole entry (torn by a kill, or edited: a field missing, a wrong type)
        is skipped and counted (``unreadable``): that file is done again."""
        entries: dict[str, dict[str, Any]] = {}
        self.check()
        if not os.path.lexists(self.path):
            return entries
        from klc.fsutil import read_input  # (a FIFO named as the journal is refused)

        text = read_input(self.path, "journal", limit=1 << 36).decode("utf-8", "replace")
        for n, line in enumerate(text.splitlines()):
            try:
                doc = json.loads(line)
            except (ValueError, RecursionError):
                doc = None  # torn by a kill mid-append, or not JSON at all
            if n == 0 and isinstance(doc, dict) and doc.get("journal") == "klc batch":
                continue  # the header
            if not _valid_entry(doc):
                if line.strip():
                    self.unreadable += 1
                continue
            assert isinstance(doc, dict)
            if doc["config"] == self.digest:
                entries[doc["key"]] = doc
            else:
                self.other += 1
        return entries

    def open(self, fresh: bool) -> None:
        """Open for appending, under an exclusive advisory lock held until ``close``: a second
        batch on the same journal stops here, before it touches any file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.check()
        try:
            # O_NOFOLLOW: a link planted between the check and here is refused all the same
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT
                         | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                         | getattr(os, "O_CLOEXEC", 0), 0o644)
            self._f = os.fdopen(fd, "ab")
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
                raise KlcError(f"{shown(self.path)}: the journal path changed while klc "
                               "opened it (now a link, or not a regular file); not written")
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
            why = "it is a symbolic link" if e.errno == errno.ELOOP else e.strerror or str(e)
            raise KlcError(f"{shown(self.path)}: cannot write the journal: {why}") from None
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
                raise KlcError(f"{shown(self.path)}: another klc batch is running with this "
                               "journal (it holds the journal's lock); wait for it to end, or give "
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
            raise KlcError(f"{shown(self.path)}: cannot write the journal: {e.strerror or e}; the "
                           "batch stopped (every file is as it was or completely written; "
                           "run it again with --resume once this is fixed)") from None

    def close(self) -> None:
        if self._f is not None:
            f, self._f = self._f, None
            with contextlib.suppress(OSError):  # (a line a full disk cut is ignored on reading)
                f.close()


_SHA_FIELDS = ("input_sha", "output_sha")


def _valid_entry(doc: object) -> bool:
    """A journal line is an input like any other: an entry has every field, each of its
    type, or it is not used (``klc batch --resume`` then does that file again)."""
    if not isinstance(doc, dict):
        return False
    if not all(isinstance(doc.get(k), str) for k in ("config", "key", "phase", *_SHA_FIELDS)):
        return False
    if doc["phase"] not in ("begin", "done"):
        return False
    res = doc.get("result")
    if not isinstance(res, dict) or not isinstance(res.get("path"), str) \
            or res.get("status") not in STATUSES:
        return False
    try:
        FileResult.from_json(res)
    except (KeyError, TypeError, ValueError, OverflowError):
        return False
    return True


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
    if res.status == ERROR:
        # an error is the file system's or the machine's (a full disk, a read that failed, a
        # worker that died), and may be gone now: the file is done again, never taken as done
        return None
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
