"""Reading and writing files safely.

Reads (``read_input``): regular files only, opened without blocking (a FIFO or a device named
on the command line is refused, never waited on), bounded by ``max_bytes`` (``--max-bytes``,
``$KLC_MAX_BYTES``; the default is far above any real source file). Writes
(``atomic_write``): never a half-written file: a temporary file in the same folder, fsync,
then rename over the target (keeping the target's permission bits); a target that exists and
is not a regular file (a device, a FIFO, a folder) is refused."""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

from klc.errors import KlcError, shown

__all__ = ["atomic_write", "read_input", "shown"]


def diff_name(prefix: str, path: str) -> str:
    """A file name for a diff header (``a/NAME``), quoted as git quotes it when it holds a
    control character, a quote or a backslash (a newline in a name would end the header)."""
    name = prefix + path
    if not any(ord(c) < 0x20 or c in '"\\' or ord(c) == 0x7F for c in name):
        return name
    escaped = "".join({"\n": "\\n", "\t": "\\t", '"': '\\"', "\\": "\\\\"}.get(c)
                      or (f"\\{ord(c):03o}" if ord(c) < 0x20 or ord(c) == 0x7F else c)
                      for c in name)
    return f'"{escaped}"'


DEFAULT_MAX_BYTES = 16 * 1024 * 1024  # the largest real CUDA file we know is ~2 MB
MAX_BYTES_ENV = "KLC_MAX_BYTES"


def max_bytes() -> int:
    """The input size limit: ``$KLC_MAX_BYTES`` (set by ``--max-bytes``), else the default."""
    value = os.environ.get(MAX_BYTES_ENV, "")
    try:
        n = int(value) if value else DEFAULT_MAX_BYTES
    except ValueError:
        raise KlcError(f"{MAX_BYTES_ENV}={value!r}: expected a number of bytes") from None
    if n < 1:
        raise KlcError(f"{MAX_BYTES_ENV}={value!r}: expected a positive number of bytes")
    return n


def parse_size(text: str) -> int:
    """``--max-bytes`` values: ``1000000``, ``64K``, ``16M``, ``1G``."""
    t = text.strip().upper().removesuffix("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    try:
        n = int(t[:-1] if scale > 1 else t) * scale
    except ValueError:
        raise KlcError(f"--max-bytes {text!r}: expected a size like 1000000, 64K or 16M"
                       ) from None
    if n < 1:
        raise KlcError(f"--max-bytes {text!r}: expected a positive size")
    return n


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def kind_of(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_input(path: str | Path, what: str = "file", limit: int | None = None) -> bytes:
    """The bytes of a regular file, or a KlcError naming it: no such file, a broken link, a
    link loop, a directory, a FIFO or a device (opened without blocking, then refused), a
    file over the size limit, permission denied."""
    name = str(path)
    label = shown(name)  # (a newline or an escape sequence in a name is shown escaped)
    limit = max_bytes() if limit is None else limit
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise KlcError(f"{label}: {_why_not(name, e, what)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            expected = f", expected a {what}" if what != "file" else ""
            raise KlcError(f"{label}: is {kind_of(st.st_mode)}, not a regular file{expected}")
        if st.st_size > limit:
            raise KlcError(f"{label}: {st.st_size} bytes, over the limit of {limit} "
                           "(--max-bytes)")
        chunks: list[bytes] = []
        total = 0
        while True:  # (a file in /proc says size 0 and may be endless: bounded all the same)
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise KlcError(f"{label}: over the limit of {limit} bytes (--max-bytes)")
        return b"".join(chunks)
    except OSError as e:
        raise KlcError(f"{label}: cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)


def _why_not(name: str, e: OSError, what: str) -> str:
    if e.errno == errno.ENOENT:
        if os.path.islink(name):
            return "broken symbolic link (its target does not exist)"
        return "no such rule file" if what == "rule file" else "no such file"
    if e.errno == errno.ELOOP:
        return "symbolic link loop"
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if e.errno == errno.ENXIO:  # a socket, or a FIFO opened without a writer on some systems
        return "is not a regular file"
    return f"cannot read: {e.strerror or e}"


def replace_file(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` as ``atomic_write`` does (a new file of a name no one else
    makes, then a rename over ``path``: whole or absent), without what a user's file needs
    and a file of klc's own (a cache entry) does not: links followed, the mode kept, the
    folder checked, the fsync. OSError where it cannot; the new file is not left behind."""
    tmp = f"{os.path.dirname(path)}/.{os.path.basename(path)}.{os.getpid()}.{next(_SERIAL)}.klc-tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


_SERIAL = itertools.count()  # (with the process, names the files ``replace_file`` makes)


def atomic_write(path: str | Path, data: bytes | BinaryIO, *, in_place: bool = False,
                 inside: str | Path | None = None, durable: bool = True) -> None:
    """Write ``data`` (bytes, or a binary file read to its end in chunks: a copy) to ``path``
    atomically. A symbolic link is written at its target (the
    link stays a link), the same for every command. ``inside``: the resolved target must lie
    in this folder (``klc batch --out`` never follows a link out of its output folder).
    ``in_place``: the file being rewritten is the input; one with other hard links is refused
    (the rename would give this name new bytes and leave the other names the old ones).
    ``durable=False`` leaves out the fsync: a cache entry, which a crash may lose (the rename
    still makes it whole or absent) and the next run makes again."""
    target = Path(path)
    if os.path.islink(path):
        target = Path(os.path.realpath(path))
        if os.path.exists(path) and not (os.path.exists(target)
                                         and os.path.samefile(path, target)):
            # a "magic" link (/proc/self/fd/1) names no file that a rename could replace
            raise KlcError(f"{shown(path)}: a link to {shown(os.readlink(path))}, not a "
                           "regular file; not replaced")
    if inside is not None:
        real, root = os.path.realpath(path), os.path.realpath(inside)
        if os.path.commonpath([real, root]) != root:
            raise KlcError(f"{shown(path)}: leads out of the output folder {shown(inside)} "
                           f"(to {shown(real)}) through a symbolic link; not written")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise KlcError(f"{shown(path)}: folder {shown(folder)} does not exist")
    try:
        st = target.stat() if os.path.lexists(target) else None
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise KlcError(f"{shown(path)}: is {kind_of(st.st_mode)}, not a regular file; not "
                           "replaced")
        if in_place and st is not None and st.st_nlink > 1:
            raise KlcError(f"{shown(path)}: has {st.st_nlink} hard links; rewriting it in "
                           "place would change this name only (write a copy with -o / --out "
                           "instead)")
        mode = stat.S_IMODE(st.st_mode) if st is not None else 0o644
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".klc-tmp", dir=folder)
    except OSError as e:
        raise KlcError(f"{shown(path)}: cannot write: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(data, bytes | bytearray):
                f.write(data)
            else:
                shutil.copyfileobj(data, f, 1 << 20)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise KlcError(f"{shown(path)}: cannot write: {e.strerror or e}") from None
        raise
