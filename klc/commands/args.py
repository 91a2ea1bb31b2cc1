"""Argument types and checks the commands share: a bad value is refused by argparse (one
line, exit 2) before anything runs."""

from __future__ import annotations

import argparse
import math

from klc.errors import KlcError

MAX_JOBS = 1024  # worker processes: more is a typo (each costs a process and its memory)
MAX_SECONDS = 86400.0  # a time limit of more than a day is a typo, not a setting


def check_jobs(n: int) -> int:
    """``-j N``: from 1 to ``MAX_JOBS`` worker processes, else a KlcError."""
    if n < 1:
        raise KlcError(f"-j {n}: give at least one job")
    if n > MAX_JOBS:
        raise KlcError(f"-j {n}: at most {MAX_JOBS} worker processes (each is a process "
                       "with its own memory)")
    return n


def seconds(text: str) -> float:
    """A time limit: a positive, finite number of seconds, at most ``MAX_SECONDS``."""
    try:
        s = float(text)
    except ValueError:
        s = math.nan
    if not 0 < s <= MAX_SECONDS:  # (NaN fails too)
        raise argparse.ArgumentTypeError(f"{text!r}: expected seconds, more than 0 and at "
                                         f"most {MAX_SECONDS:g}")
    return s


def output_path(text: str) -> str:
    """A file to write: not empty (``-o ''`` is a mistake, not "no output")."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty file name")
    return text


def holes(items: list[str]) -> dict[str, str]:
    """``--hole NAME=VALUE`` items by name; a name given twice is refused (which would win is
    a guess)."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip().lstrip("?")
        if not sep or not name:
            raise KlcError(f"--hole {item!r}: expected NAME=VALUE")
        if name in out:
            raise KlcError(f"--hole {item!r}: hole {name} is given twice (--hole {name}="
                           f"{out[name]} before); give each hole once")
        out[name] = value.strip()
    return out


def add_build_flags(p: argparse.ArgumentParser) -> None:
    """``-I``, ``-D`` and ``--include-from``: how the compiler finds the file's headers and
    which switches it sets, for every command that parses or compiles (klc.cuda.flags)."""
    p.add_argument("-I", dest="include_dirs", action="append", metavar="DIR",
                   help="a folder of headers the file includes (as the compiler's -I)")
    p.add_argument("-D", dest="defines", action="append", metavar="NAME[=VALUE]",
                   help="a macro switch (as the compiler's -D), e.g. -D ENABLE_BF16")
    p.add_argument("--include-from", metavar="compile_commands.json",
                   help="take each file's -I/-D from its entry in a compile_commands.json")
