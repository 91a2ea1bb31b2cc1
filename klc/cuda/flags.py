"""Include paths and macros for every command that parses or compiles: ``-I DIR``,
``-D NAME[=VALUE]`` and ``--include-from compile_commands.json`` (the entry of the file at
hand: its ``-I``, ``-isystem``, ``-D`` and ``-U`` options, relative folders taken from the
entry's ``directory``).

The command line sets them once (``set_flags``); they travel to worker processes in the
environment (``KLC_BUILD_FLAGS``, JSON), as ``--max-bytes`` does, and ``flags_for(path)``
gives a file's: the command line's, then its compile_commands.json entry's. libclang gets
them as its own ``-I``/``-D`` options (``clang_args``), NVRTC and nvcc as theirs
(``compiler_options``), so a typedef in a header of the project, or a ``-DUSE_BF16`` switch,
means to klc what it means to the compiler.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from klc.errors import KlcError

ENV = "KLC_BUILD_FLAGS"
_NAME = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class BuildFlags:
    """Include folders (in search order) and macro switches (``NAME``, ``NAME=VALUE``, or
    ``-NAME`` for an undefine)."""

    include: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    compile_commands: str | None = None  # where per-file entries come from
    notes: tuple[str, ...] = field(default=(), compare=False)

    def clang_args(self) -> list[str]:
        out: list[str] = []
        for d in self.include:
            out += ["-I", d]
        for d in self.defines:
            out += ["-U", d[1:]] if d.startswith("-") else ["-D", d]
        return out

    def compiler_options(self) -> tuple[str, ...]:
        """The same, as NVRTC and nvcc options (``-I/x``, ``-DNAME=1``, ``-UNAME``)."""
        return (*(f"-I{d}" for d in self.include),
                *(f"-U{d[1:]}" if d.startswith("-") else f"-D{d}" for d in self.defines))

    def macro_values(self) -> dict[str, str]:
        """The ``-D`` switches as name -> replacement text (``-DX`` is ``1``)."""
        out: dict[str, str] = {}
        for d in self.defines:
            if d.startswith("-"):
                out.pop(d[1:], None)
                continue
            name, _, value = d.partition("=")
            out[name] = value if "=" in d else "1"
        return out

    def merged(self, other: BuildFlags) -> BuildFlags:
        return BuildFlags((*self.include, *(d for d in other.include if d not in self.include)),
                          (*self.defines, *other.defines), self.compile_commands,
                          (*self.notes, *other.notes))

    def to_env(self) -> str:
        return json.dumps({"include": list(self.include), "defines": list(self.defines),
                           "compile_commands": self.compile_commands})


def check_define(text: str) -> str:
    """A ``-D`` argument (``NAME`` or ``NAME=VALUE``), or a one-line error."""
    name = text.partition("=")[0]
    if not _NAME.fullmatch(name):
        raise KlcError(f"-D {text}: not a macro name (write -D NAME or -D NAME=VALUE)")
    return text


def from_args(include: list[str] | None, defines: list[str] | None,
              include_from: str | None) -> BuildFlags:
    """The command line's flags, each checked: a folder that is not one, a bad macro name,
    a compile_commands.json that cannot be read are one-line errors."""
    dirs = []
    for d in include or ():
        p = Path(d)
        if not p.is_dir():
            raise KlcError(f"-I {d}: no such folder")
        dirs.append(str(p.resolve()))
    defs = tuple(check_define(d) for d in defines or ())
    cc = None
    if include_from is not None:
        _entries(str(Path(include_from).resolve()))  # read now: a bad file is bad input
        cc = str(Path(include_from).resolve())
    return BuildFlags(tuple(dirs), defs, cc)


def set_flags(flags: BuildFlags) -> None:
    """Make ``flags`` the command's (and its worker processes') flags."""
    if flags == BuildFlags():
        os.environ.pop(ENV, None)
    else:
        os.environ[ENV] = flags.to_env()


def current() -> BuildFlags:
    """The command's flags (from the environment), without any file's entry."""
    raw = os.environ.get(ENV)
    if not raw:
        return BuildFlags()
    return _from_env(raw)


@lru_cache(maxsize=8)
def _from_env(raw: str) -> BuildFlags:
    try:
        d = json.loads(raw)
        return BuildFlags(tuple(d.get("include", ())), tuple(d.get("defines", ())),
                          d.get("compile_commands"))
    except (ValueError, TypeError, AttributeError):
        raise KlcError(f"${ENV} is not klc's JSON ({raw[:60]!r})") from None


def flags_for(path: str) -> BuildFlags:
    """The flags of one file: the command's, then its compile_commands.json entry's."""
    base = current()
    if base.compile_commands is None or path == "<memory>":
        return base
    entry = _entry_for(base.compile_commands, str(Path(path).resolve()))
    if entry is None:
        return BuildFlags(base.include, base.defines, base.compile_commands,
                          (f"{path}: no entry in {base.compile_commands}",))
    return base.merged(entry)


@lru_cache(maxsize=8)
def _entries(path: str) -> dict[str, BuildFlags]:
    """A compile_commands.json as flags by absolute file path."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise KlcError(f"--include-from {path}: cannot read it ({e.strerror})") from None
    except ValueError as e:
        raise KlcError(f"--include-from {path}: not JSON ({e})") from None
    if not isinstance(data, list):
        raise KlcError(f"--include-from {path}: not a compile_commands.json (a list of "
                       "entries)")
    out: dict[str, BuildFlags] = {}
    for i, e in enumerate(data):
        if not isinstance(e, dict) or not isinstance(e.get("file"), str) or \
                not isinstance(e.get("directory", ""), str):
            raise KlcError(f"--include-from {path}: entry {i} has no 'file' (and "
                           "'directory')")
        base = Path(e.get("directory") or Path(path).parent)
        if "arguments" in e and isinstance(e["arguments"], list):
            argv = [str(a) for a in e["arguments"]]
        elif isinstance(e.get("command"), str):
            try:
                argv = shlex.split(e["command"])
            except ValueError as err:
                raise KlcError(f"--include-from {path}: entry {i}: {err}") from None
        else:
            raise KlcError(f"--include-from {path}: entry {i} has neither 'arguments' nor "
                           "'command'")
        out[str((base / e["file"]).resolve())] = _parse_argv(argv, base)
    return out


def _entry_for(cc: str, file: str) -> BuildFlags | None:
    return _entries(cc).get(file)


def _parse_argv(argv: list[str], base: Path) -> BuildFlags:
    inc: list[str] = []
    defs: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        for opt, into in (("-I", inc), ("-isystem", inc), ("--include-path", inc),
                          ("-D", defs), ("--define-macro", defs), ("-U", defs)):
            if a == opt and i + 1 < len(argv):
                value = argv[i + 1]
                i += 1
            elif (a.startswith(opt) and len(a) > len(opt) and not a.startswith("--")) or \
                    a.startswith(opt + "="):
                value = a[len(opt):].lstrip("=")
            else:
                continue
            if into is inc:
                value = str((base / value).resolve())
            elif opt == "-U":
                value = "-" + value
            into.append(value)
            break
        i += 1
    return BuildFlags(tuple(inc), tuple(defs))
