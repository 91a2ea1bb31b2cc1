"""``klc list``'s results kept on disk, so that a re-run (a pre-commit hook, a code-scanning
step over a tree that changed in a few files) lists only what changed.

A file's listing is decided by its bytes and path, the rules (what they match and judge, and
what a listing prints of them), the listing's options and klc's own code. So a finished
``FileListing`` is stored as JSON under the sha256 of all of them:

    file bytes, path, the rule library's digest, options, klc's code digest

A file that could not be read is never stored (it is read again next time). Entries live in
``$KLC_CACHE_DIR/list`` (default ``~/.cache/klc/list``; ``KLC_NO_CACHE=1`` turns the cache
off), one JSON file per key, written atomically (a new file renamed over the entry): a crash or two
listings sharing the folder never leave half an entry, and an entry that does not read back as
a listing (damaged, truncated, of another layout) is a miss and is written again.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from klc.rule.cache import cache_root, code_digest, digest

__all__ = ["LAYOUT", "ListCache", "code_digest", "default_dir", "digest"]

LAYOUT = b"klc-list-cache/1"


def default_dir() -> Path | None:
    """``$KLC_CACHE_DIR/list`` (default ``~/.cache/klc/list``), None when ``KLC_NO_CACHE``
    is set to anything but 0."""
    root = cache_root()
    return root / "list" if root is not None else None


@dataclass(frozen=True)
class ListCache:
    """A folder of listings by key (see the module doc); ``context``: the digest of what
    every key of one run shares (the rules, the options, klc's code)."""

    root: Path
    context: str

    def key(self, path: str, source: bytes) -> str:
        return digest((LAYOUT, self.context.encode(), path.encode(), source))

    def _file(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored listing (its JSON object), or None: missing, or not readable as one."""
        try:
            data = json.loads(self._file(key).read_bytes())
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("key") != key \
                or not isinstance(data.get("listing"), dict):
            return None
        return data["listing"]  # type: ignore[no-any-return]

    def put(self, key: str, listing: dict[str, Any]) -> None:
        """Store a listing; a folder that cannot be written leaves the run uncached.

        Written as ``atomic_write`` writes (a new file of a name no one else makes, then a
        rename over the entry: whole or absent), without what a user's file needs and an
        entry does not (links followed, the mode kept, the folder checked): an entry is
        written for every file a listing reads, and that took more time than reading one."""
        target = self._file(key)
        folder = str(target.parent)
        tmp = f"{folder}/.{key}.{os.getpid()}.{next(_SERIAL)}.klc-tmp"
        data = json.dumps({"key": key, "listing": listing}).encode()
        try:
            if folder not in _MADE:
                os.makedirs(folder, exist_ok=True)
                _MADE.add(folder)
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileNotFoundError:  # (the folder was removed since: made again)
                os.makedirs(folder, exist_ok=True)
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            os.replace(tmp, str(target))
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


# the folders this process made or found (each entry's folder is asked once); the serial
# numbers that, with the process, name the files written before their rename
_MADE: set[str] = set()
_SERIAL = itertools.count()
