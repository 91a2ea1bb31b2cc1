"""What klc says about a file's content, each in one place: the content hash (``sha256``,
and ``json_sha256`` of a JSON document) and the unified diff (``unified_diff``) that
``klc apply``, ``klc batch``, ``klc optimize``, ``klc lineage`` and the Python API all print.

A diff applies with ``git apply`` and ``patch -p1`` run from the working folder, whatever
form the path was given in: its headers name the file relative to the working folder
(the same ``a/`` name for a relative path, the same path with ``./`` or ``..`` steps, or
the absolute path of a file under the working folder). A file outside the working folder is
named from the root (apply it from ``/``), since neither tool takes ``..`` or an absolute
name.
A last line without a newline carries ``\\ No newline at end of file``, as diff writes it.
A hunk may carry a label after its ``@@`` line (``--annotate``: the rules that made it),
which both tools read as a section heading and ignore.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from collections.abc import Callable

from klc.fsutil import diff_name

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
NO_NEWLINE = "\\ No newline at end of file\n"


def sha256(data: bytes) -> str:
    """The content hash klc records and compares (hex sha256 of the bytes)."""
    return hashlib.sha256(data).hexdigest()


def json_sha256(doc: object) -> str:
    """The content hash of a JSON document (its keys sorted): what a cache, a journal or a
    finding's fingerprint keys on."""
    return sha256(json.dumps(doc, sort_keys=True).encode())


def diff_path(path: str) -> str:
    """``path`` as a diff header names it (module doc): relative to the working folder where
    it lies under it, else from the root; never with ``..`` or a leading ``/``."""
    if not path:
        return path
    full = os.path.normpath(os.path.join(os.getcwd(), path))  # links kept: the name given
    rel = os.path.relpath(full, os.getcwd())
    if rel == os.curdir or rel == os.pardir or rel.startswith(os.pardir + os.sep):
        rel = full.lstrip(os.sep)
    return rel.replace(os.sep, "/")


def _text(data: str | bytes) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def unified_diff(old: str | bytes, new: str | bytes, path: str, *, new_path: str | None = None,
                 label: Callable[[int, int], str] | None = None) -> str:
    """The unified diff of a file's two versions ("" when they are equal). ``new_path``
    names the new side when it differs (a lineage's next version); ``label(first, last)``
    gives the text after a hunk's ``@@`` line from the old lines it spans (1-based, ``last``
    below ``first`` for a pure insertion after ``first - 1``)."""
    a = _text(old).splitlines(keepends=True)
    b = _text(new).splitlines(keepends=True)
    names = diff_name("a/", diff_path(path)), diff_name("b/", diff_path(new_path or path))
    out: list[str] = []
    for line in difflib.unified_diff(a, b, *names):
        if label is not None and (m := _HUNK.match(line)):
            start, count = int(m.group(1)), int(m.group(2) or "1")
            first = start if count else start + 1
            heading = label(first, first + count - 1)
            line = f"{m.group(0)} {heading}\n" if heading else line
        out.append(line if line.endswith("\n") else line + "\n" + NO_NEWLINE)
    return "".join(out)
