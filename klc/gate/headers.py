"""The project's own headers, as NVRTC can compile them.

A kernel file blanks its host code before NVRTC sees it (``prepare_device_source``), but a
header of its project (``#include "common.h"``, found beside the file or through ``-I``)
often holds host code too: the C library's I/O and timer headers, error-checking functions
that call ``printf`` and ``exit``. Each such header the file includes (and each one those
include) is read, blanked the same way (host functions and host-only includes, every line
kept where it was), and written under ``$KLC_CACHE_DIR/headers/<digest>/`` at the path the
include spells; that folder is searched first (the file's own quoted includes of them are
compiled as angle includes, same length, since NVRTC looks beside the file first), so NVRTC
compiles what nvcc's device pass would. The digest covers every copied header's prepared
text: an edited header gives a new folder, hence a new compile cache key (the include path
is part of it).

Only headers found in the file's folder or the given folders are copied; CUDA's own headers
and klc's shims are searched as before. An include spelled with ``..`` or as an absolute path
is left to the original folders, and so is a header that does not parse.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from klc.cuda.model import Unit
from klc.errors import KlcError
from klc.fsutil import atomic_write

_INCLUDE_RE = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]+)[>\"]", re.M)
_QUOTED_RE = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"\n]+)[>\"]", re.M)
MAX_HEADERS = 256


def shadow_headers(source: bytes, path: str, search: tuple[str, ...], cache: Path,
                   prepare: Callable[[Unit], bytes], host_only: frozenset[str]
                   ) -> tuple[str | None, set[str]]:
    """The folder of prepared copies (``prepare``: a unit's device source) of the project
    headers ``source`` includes, leaving out ``host_only`` headers (None where it includes
    none), and the names ``source`` itself includes them by."""
    from klc.cuda.parse import parse_bytes

    here = Path(path).resolve().parent if path != "<memory>" else None
    roots = [Path(d) for d in search]
    copies: dict[str, bytes] = {}
    top: set[str] = set()
    queue: list[tuple[bytes, Path | None, str]] = [(source, here, "")]
    while queue and len(copies) < MAX_HEADERS:
        text, folder, rel_dir = queue.pop(0)
        for m in _INCLUDE_RE.finditer(text):
            quote, name = m.group(1), m.group(2).decode("utf-8", "replace").strip()
            if name in host_only or ".." in Path(name).parts or Path(name).is_absolute():
                continue
            found, rel = None, name
            if quote == b'"' and folder is not None and (folder / name).is_file():
                found, rel = folder / name, str(Path(rel_dir) / name)
            else:
                found = next((r / name for r in roots if (r / name).is_file()), None)
            if found is None or rel in copies:
                continue
            try:
                data = found.read_bytes()
                prepared = prepare(parse_bytes(data, str(found)))
            except (OSError, KlcError):
                continue
            copies[rel] = prepared
            if text is source:
                top.add(name)
            queue.append((data, found.parent, str(Path(rel).parent)))
    if not copies:
        return None, top
    h = hashlib.sha256()
    for rel in sorted(copies):
        h.update(rel.encode() + b"\0" + copies[rel] + b"\0")
    folder = cache / "headers" / h.hexdigest()[:24]
    for rel, data in copies.items():
        target = folder / rel
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(target, data)
    return str(folder), top


def angle_includes(source: bytes, names: set[str]) -> bytes:
    """``#include "x.h"`` as ``#include <x.h>`` for each name copied (same length, same
    lines): NVRTC looks for a quoted include beside the file first, where the original
    is; an angle include searches the include path, where the copy comes first."""
    if not names:
        return source

    def swap(m: re.Match[bytes]) -> bytes:
        name = m.group(2).decode("utf-8", "replace").strip()
        if m.group(1) != b'"' or name not in names:
            return m.group(0)
        return m.group(0)[:m.start(1) - m.start(0)] + b"<" + m.group(2) + b">"

    return _QUOTED_RE.sub(swap, source)
