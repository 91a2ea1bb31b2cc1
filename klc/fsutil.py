"""File writes that never leave a half-written file: temporary file in the same folder,
fsync, then rename over the target (keeping the target's permission bits)."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from klc.errors import KlcError


def atomic_write(path: str | Path, data: bytes) -> None:
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise KlcError(f"{path}: folder {folder} does not exist")
    try:
        mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o644
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".klc-tmp", dir=folder)
    except OSError as e:
        raise KlcError(f"{path}: cannot write: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise KlcError(f"{path}: cannot write: {e.strerror or e}") from None
        raise
