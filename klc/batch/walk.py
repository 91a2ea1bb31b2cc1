"""Walking the input trees: ``.cu``/``.cuh`` files, sorted, links followed but never round a
loop, ``--exclude`` globs honoured; ``plan_sources`` turns them into the batch's sources.
"""

from __future__ import annotations

import errno
import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from klc.batch.config import ERROR, SOURCE_SUFFIXES, BatchOptions, FileResult
from klc.errors import KlcError, shown

if TYPE_CHECKING:
    pass

# Walking the trees


@dataclass(frozen=True)
class Source:
    """One input file: the name shown, the file read, the file written (when writing)."""

    path: str  # root joined with the path under it, as the user would name it
    real: str  # its real path (symbolic links resolved): the journal's key
    dest: str | None = None  # --out: the mirror; --in-place: the real path


def _excluded(rel: str, name: str, globs: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(rel, g) or fnmatch.fnmatchcase(name, g) for g in globs)


def walk(roots: Sequence[str], exclude: Sequence[str] = ()) -> tuple[list[tuple[str, str, str]],
                                                                       list[tuple[str, str]]]:
    """``(root, path, path under the root)`` of each ``.cu``/``.cuh`` file, sorted, and
    ``(path, message)`` for what could not be walked. Symbolic links are followed, but a
    folder already being walked (a loop) is not entered again, and a file reached twice is
    listed once. Hidden folders (``.git``) are skipped, and so are the names and paths under
    the root that match an ``exclude`` glob (``*`` crosses ``/``, as in ``fnmatch``). A file
    named as a root is taken whatever its suffix."""
    found: list[tuple[str, str, str]] = []
    problems: list[tuple[str, str]] = []
    seen_files: set[tuple[int, int]] = set()
    for root in roots:
        if not os.path.exists(root):
            raise KlcError(f"{root}: {_not_there(root)}")
        if not os.path.isdir(root):
            st = os.stat(root)
            if (st.st_dev, st.st_ino) not in seen_files:
                seen_files.add((st.st_dev, st.st_ino))
                found.append((root, root, os.path.basename(root)))
            continue
        active: set[tuple[int, int]] = set()
        _walk_dir(root, root, "", exclude, active, seen_files, found, problems)
    return found, problems


def _walk_dir(root: str, folder: str, rel: str, exclude: Sequence[str],
              active: set[tuple[int, int]], seen_files: set[tuple[int, int]],
              found: list[tuple[str, str, str]], problems: list[tuple[str, str]]) -> None:
    try:
        st = os.stat(folder)
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as e:
        problems.append((folder, f"cannot read folder: {e.strerror or e}"))
        return
    ident = (st.st_dev, st.st_ino)
    if ident in active:
        return  # a symbolic link back into a folder being walked
    active.add(ident)
    try:
        for entry in entries:
            sub = f"{rel}/{entry.name}" if rel else entry.name
            if _excluded(sub, entry.name, exclude):
                continue
            try:
                is_dir = entry.is_dir()  # follows symbolic links
                is_file = entry.is_file()
            except OSError:
                problems.append((entry.path, _not_there(entry.path)))
                continue
            if is_dir:
                if not entry.name.startswith("."):
                    _walk_dir(root, entry.path, sub, exclude, active, seen_files, found,
                              problems)
            elif entry.name.endswith(SOURCE_SUFFIXES):
                if not is_file:  # a link to nothing or to a device, a FIFO, a socket...
                    problems.append((entry.path, _not_there(entry.path)))
                    continue
                try:
                    fst = entry.stat()
                except OSError as e:
                    problems.append((entry.path, f"cannot stat: {e.strerror or e}"))
                    continue
                key = (fst.st_dev, fst.st_ino)
                if key in seen_files:
                    continue
                seen_files.add(key)
                found.append((root, entry.path, sub))
    finally:
        active.discard(ident)


def _not_there(path: str) -> str:
    """Why a path that is not a regular file or a folder cannot be read, in a few words."""
    from klc.fsutil import kind_of

    try:
        return f"is {kind_of(os.stat(path).st_mode)}, not a regular file"
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "symbolic link loop"
        if os.path.islink(path):
            return "broken symbolic link"
        return "no such file or folder" if e.errno == errno.ENOENT else \
            f"cannot stat: {e.strerror or e}"


def _inside(child: str, parent: str) -> bool:
    c, p = os.path.realpath(child), os.path.realpath(parent)
    return c == p or c.startswith(p.rstrip(os.sep) + os.sep)


def check_out_dir(roots: Sequence[str], out_dir: str) -> None:
    """Refuse an output folder inside an input tree (the batch would rewrite its own output
    on the next run), or an input inside the output folder."""
    for root in roots:
        if os.path.isdir(root) and _inside(out_dir, root):
            raise KlcError(f"--out {out_dir}: the output folder is inside the input tree {root}; "
                           "choose a folder outside it")
        if os.path.exists(out_dir) and _inside(root, out_dir):
            raise KlcError(f"--out {out_dir}: the input {root} is inside the output folder; "
                           "choose another output folder")


def plan_sources(options: BatchOptions) -> tuple[list[Source], list[FileResult]]:
    """The files of the batch with where each is written, and results for what could not be
    walked (unreadable folders, broken links)."""
    if options.mode == "out":
        if not options.out_dir:
            raise KlcError("--out needs a folder")
        check_out_dir(options.roots, options.out_dir)
    found, problems = walk(options.roots, options.exclude)
    multi = len(options.roots) > 1
    names: dict[str, str] = {}
    if options.mode == "out" and multi:
        for root in options.roots:
            name = os.path.basename(os.path.normpath(root))
            if name in names:
                raise KlcError(f"--out with several inputs mirrors each under its own name; "
                               f"{root} and {names[name]} have the same name {name!r}")
            names[name] = root
    sources = []
    for root, path, rel in found:
        dest: str | None = None
        if options.mode == "out":
            assert options.out_dir is not None
            under = rel if os.path.isdir(root) else os.path.basename(root)
            if multi and os.path.isdir(root):
                under = os.path.join(os.path.basename(os.path.normpath(root)), rel)
            dest = os.path.join(options.out_dir, under)
        real = os.path.realpath(path)
        if options.mode == "in_place":
            dest = real
        sources.append(Source(path, real, dest))
    failed = [FileResult(path, ERROR, f"{shown(path)}: {msg}") for path, msg in problems]
    return sources, failed
