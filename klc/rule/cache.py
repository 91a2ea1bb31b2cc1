"""The compiled rule library kept on disk, so that a command does not parse and compile the
same rule files (lark, then every anchor with tree-sitter and its isomorphisms: about 1.5 s
for the skills library) on every call.

What a load gives is decided by the rule files' bytes and paths and by klc's own code (the
grammar, the compiler, the rewrite kinds and predicates, the matcher that compiles anchors)
and the parsers it runs on. So the rules, with the anchors' compiled patterns beside them,
are stored under the sha256 of all of them:

    layout, Python's version, klc's code digest, the parsers' versions,
    the loader's vocabulary (rewrite kinds, predicates), every rule file's path and
    bytes, in order

Only a load of files that succeeded is stored (a load with a problem is made again, so its
messages are always the loader's own); rule text given as text (tests, learning) is never
stored. A process keeps the last few libraries it loaded, by key, in memory too. Entries
live in ``$KLC_CACHE_DIR/rules`` (default ``~/.cache/klc/rules``;
``KLC_NO_CACHE=1`` turns the cache off), one file per key, written atomically; the
``MAX_ENTRIES`` written last are kept.

An entry is never trusted blindly: it is read back only when it is a regular file of this
user that no one else may write, starts with the layout and its own key, and its payload has
the sha256 its header gives; the payload is unpickled with a loader that constructs klc's own
classes and nothing else, and must be a tuple of rules. Anything else (truncated, garbage,
another layout, another klc) is a miss: the library is compiled again and the entry
replaced.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pickle
import stat
import sys
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from klc.errors import KlcError
from klc.fsutil import atomic_write

LAYOUT = b"klc-rule-library/1"
MAX_ENTRY = 64 << 20  # bytes: the skills library's entry is under 2 MB
# the modules outside klc whose values a compiled rule holds
_ALLOWED = {("builtins", "frozenset"), ("builtins", "set"), ("builtins", "slice"),
            ("builtins", "complex")}


def cache_root() -> Path | None:
    """``$KLC_CACHE_DIR`` (default ``$XDG_CACHE_HOME/klc`` or ``~/.cache/klc``), None when
    ``KLC_NO_CACHE`` is set to anything but 0."""
    if os.environ.get("KLC_NO_CACHE", "0") not in ("", "0"):
        return None
    return Path(os.environ.get("KLC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "klc"))


@cache
def code_digest() -> str:
    """The sha256 of klc's own code (every .py and .lark file of the package): what decides
    what klc makes of its inputs (a checkout keeps one version string while its code
    changes; a release changes its code)."""
    h = hashlib.sha256()
    root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    found = []  # (every command asks: os.walk takes about half the time of pathlib's rglob)
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]  # (bytecode only)
        for name in files:
            path = os.path.join(folder, name)
            if os.path.splitext(name)[1] in (".py", ".lark") and os.path.isfile(path):
                rel = os.path.relpath(path, root)
                found.append((tuple(rel.split(os.sep)), rel, path))
    for _parts, rel, path in sorted(found):  # (in the order of the paths' parts)
        with open(path, "rb") as f:
            data = f.read()
        name = rel.encode()
        h.update(len(name).to_bytes(8, "little") + name + len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def digest(parts: Iterable[bytes]) -> str:
    """sha256 over the parts, each length-prefixed (no two lists of parts hash alike)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.hexdigest()


@cache
def _parsers() -> bytes:
    """What a compiled rule depends on of the parsers: lark for the rule text (its installed
    module, by path, size and time: importing lark only to read its version would cost a
    command that finds its library here tens of milliseconds, the package metadata reader as
    much), tree-sitter and its CUDA grammar for the anchors (their own version numbers)."""
    from importlib.util import find_spec

    import tree_sitter

    from klc.cuda.syntax import LANGUAGE

    spec = find_spec("lark")
    try:
        st = os.stat(spec.origin) if spec is not None and spec.origin else None
    except OSError:
        st = None
    lark = f"{spec.origin}:{st.st_size}:{st.st_mtime_ns}" if spec and st else "?"
    grammar = ".".join(map(str, LANGUAGE.semantic_version or ())) or "?"
    return (f"lark={lark} tree-sitter={tree_sitter.__version__} "
            f"tree-sitter-cuda={grammar} abi={LANGUAGE.abi_version} "
            f"kinds={LANGUAGE.node_kind_count} fields={LANGUAGE.field_count}").encode()


def library_key(sources: Sequence[tuple[str, bytes]], vocabulary: bytes = b"") -> str:
    """The key of a load of these rule files (path, bytes), in this order, against this
    vocabulary (the rewrite kinds and predicates the loader was given)."""
    parts = [LAYOUT, sys.version.encode(), code_digest().encode(), _parsers(), vocabulary]
    for path, data in sources:
        parts += [path.encode(), data]
    return digest(parts)


class _KlcOnly(pickle.Unpickler):
    """Unpickles klc's own classes (and the few builtins a rule holds), nothing else: an
    entry cannot name another callable to run."""

    def find_class(self, module: str, name: str) -> Any:
        if ((module == "klc" or module.startswith("klc.")) and "." not in name) \
                or (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not a klc class")


def _entry(root: Path, key: str) -> Path:
    return root / "rules" / f"{key}.bin"


def read_entry(root: Path, key: str) -> Any | None:
    """The stored payload of a key, or None: missing, or not what this cache writes (module
    doc)."""
    path = _entry(root, key)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY \
                or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) \
                or (hasattr(os, "geteuid") and st.st_uid != os.geteuid()):
            return None
        try:
            data = f.read(MAX_ENTRY + 1)
        except OSError:
            return None
    head = LAYOUT + b"\n" + key.encode() + b"\n"
    if not data.startswith(head) or len(data) < len(head) + 65:
        return None
    sealed, payload = data[len(head):len(head) + 64], data[len(head) + 65:]
    if hashlib.sha256(payload).hexdigest().encode() != sealed:
        return None
    try:
        return _KlcOnly(io.BytesIO(payload)).load()
    except Exception:  # (a payload of another klc: a class moved, a field renamed)
        return None


def write_entry(root: Path, key: str, value: Any) -> None:
    """Store a payload under a key; a folder that cannot be written leaves it unstored."""
    try:
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return
    data = b"".join((LAYOUT, b"\n", key.encode(), b"\n",
                     hashlib.sha256(payload).hexdigest().encode(), b"\n", payload))
    target = _entry(root, key)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(target):  # (made anew, not with the mode of what was there)
            os.unlink(target)
        atomic_write(target, data)
    except (OSError, KlcError):
        return
    _prune(target.parent)


MAX_ENTRIES = 32  # libraries kept: each rule file edited, each klc change, makes a new one


def _prune(folder: Path) -> None:
    """Remove the entries beyond the MAX_ENTRIES written last (one removed while still in
    use is a miss, written again)."""
    try:
        entries = [(e.stat().st_mtime_ns, e) for e in folder.glob("*.bin")]
    except OSError:
        return
    if len(entries) <= MAX_ENTRIES:
        return
    entries.sort(key=lambda t: t[0], reverse=True)
    for _, old in entries[MAX_ENTRIES:]:
        with contextlib.suppress(OSError):
            old.unlink()


def cached_library(sources: Sequence[tuple[str, bytes]],
                   build: Callable[[], tuple[list[Any], Any]],
                   valid: Callable[[Any], bool], seed: Callable[[Any], None],
                   vocabulary: bytes = b"") -> list[Any]:
    """The rules of these files (path, bytes): from the cache when it holds a valid entry
    for them, else ``build()``'s, stored. ``build`` returns the rules (an empty list: a load
    that failed, never stored) and the compiled anchors that go with them; ``valid`` says
    whether a stored rule is a rule; ``seed`` hands the stored anchors to the matcher;
    ``vocabulary``: what the loader compiles against (part of the key)."""
    root = cache_root()
    key = library_key(sources, vocabulary) if root is not None else ""
    if root is not None:
        known = _MEMO.get(key)
        if known is not None:  # (loaded in this process already: the same rule objects)
            return list(known)
        entry = read_entry(root, key)
        if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], tuple) \
                and entry[0] and all(valid(r) for r in entry[0]):
            try:
                seed(entry[1])
            except (TypeError, ValueError):
                entry = None
            if entry is not None:
                _remember(key, entry[0])
                return list(entry[0])
    rules, anchors = build()
    if root is not None and rules:
        write_entry(root, key, (tuple(rules), anchors))
        _remember(key, tuple(rules))
    return rules


# the libraries this process loaded, by key (an in-process run of many commands, such as
# the fuzz harness's, reads and unpickles each once): the last few
_MEMO: dict[str, tuple[Any, ...]] = {}
_MEMO_SIZE = 16


def _remember(key: str, rules: tuple[Any, ...]) -> None:
    _MEMO.pop(key, None)
    _MEMO[key] = rules
    while len(_MEMO) > _MEMO_SIZE:
        del _MEMO[next(iter(_MEMO))]
