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

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from klc.fsutil import replace_file
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

    def _file(self, key: str) -> str:
        return os.path.join(self.root, key[:2], f"{key}.json")  # (a path per file listed:
        # os.path, not pathlib, which takes longer than a miss's open)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored listing (its JSON object), or None: missing, or not readable as one."""
        try:
            with open(self._file(key), "rb") as f:
                data = json.loads(f.read())
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("key") != key \
                or not isinstance(data.get("listing"), dict):
            return None
        return data["listing"]  # type: ignore[no-any-return]

    def put(self, key: str, listing: dict[str, Any]) -> None:
        """Store a listing; a folder that cannot be written leaves the run uncached.

        Written by ``klc.fsutil.replace_file`` (whole or absent, without what a user's file
        needs and an entry does not): an entry is written for every file a listing reads,
        and ``atomic_write`` took more time than reading one."""
        target = self._file(key)
        folder = os.path.dirname(target)
        data = json.dumps({"key": key, "listing": listing}).encode()
        try:
            if folder not in _MADE:
                os.makedirs(folder, exist_ok=True)
                _MADE.add(folder)
            try:
                replace_file(target, data)
            except FileNotFoundError:  # (the folder was removed since: made again)
                os.makedirs(folder, exist_ok=True)
                replace_file(target, data)
        except OSError:
            pass


_MADE: set[str] = set()  # the folders this process made or found (each asked once)
