"""``klc parse``: print each file's kernels and device functions, parameters, launch
bounds, shared memory, loops and launches, and its syntax problems.

Exit 0: parsed; 2: a file unreadable or with syntax errors left after recovery.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from klc.commands.console import err, out
from klc.errors import KlcError, shown, where

if TYPE_CHECKING:
    from klc.cuda.model import Unit


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("parse", help="parse CUDA files and print their kernels and device "
                       "functions, parameters, launch bounds, shared memory and syntax problems")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def run(args: argparse.Namespace) -> int:
    """Print each file's model; a file that cannot be read, or that keeps syntax errors after
    recovery, sets exit status 2, and the others are still printed."""
    from klc.cuda.parse import parse_file

    def parsed() -> Iterator[Unit | KlcError]:
        for path in args.files:
            try:
                yield parse_file(path)
            except KlcError as e:
                yield e

    return show(parsed(), as_json=args.json)


def show(units: Iterable[Unit | KlcError], as_json: bool = False) -> int:
    """Print the models of ``units`` as ``klc parse`` does, file by file as each comes (text,
    or one JSON list written an item at a time), and each error on stderr; return the exit
    status. A ``KlcError`` in ``units`` is a file that could not be read."""
    from klc.report import json_text, unit_summary

    status = 0
    items = 0
    for unit in units:
        if isinstance(unit, KlcError):
            err.print(f"klc: error: {unit}", markup=False, emoji=False)
            status = 2
            continue
        if unit.problems:
            status = 2
        if as_json:  # the text of json.dumps(list of summaries, indent=2), an item at a time
            sys.stdout.write(("[\n  " if not items else ",\n  ") + json_text(
                unit_summary(unit)).replace("\n", "\n  "))
            items += 1
        else:
            _print_unit(unit)
        for p in unit.problems:
            err.print(f"klc: error: {p.describe(unit.path)}", markup=False, emoji=False)
    if as_json:
        sys.stdout.write("\n]\n" if items else "[]\n")
    return status


def _print_unit(unit: Unit) -> None:
    """The text view of ``klc parse``, one print per file (rich's cost is mostly per call and
    line): the markup of ``_unit_lines``, or where the console writes no styles (not a
    terminal: ``writes_plain``) the text that markup shows, made as it is (no markup to
    read) unless a piece of source text would read differently through markup."""
    if out.writes_plain:
        try:
            out.print_plain("\n".join(_unit_lines(unit, _as_is, _plain)))
            return
        except _ReadsAsMarkup:
            pass
    from rich.markup import escape

    out.print_markup("\n".join(_unit_lines(unit, escape, _styled)))


class _ReadsAsMarkup(Exception):
    """A piece of text whose escaped markup rich does not read back as the same text."""


# a "[" that opens a tag (a lowercase letter, "#", "/" or "@" after it) closed by no "]"
# before the text's end, or a "[" that ends the text: rich's escape leaves it as it is, and
# the markup that follows the piece may close it (or, after a lone "[", open and close it:
# the pieces "[", "@" and "]" read as the tag "[@]")
_OPEN_TAG_AT_END = re.compile(r"\[(?:[a-z#/@][^\[\]]*)?$")


def _as_is(text: str) -> str:
    """``text`` where its markup (``rich.markup.escape(text)``, and the markup around it)
    reads back as ``text`` itself: it holds no backslash (rich's escape doubles one before a
    tag or at the end, its reader takes one from "\\[") and no tag opened and not closed
    inside it; else ``_ReadsAsMarkup``."""
    if "\\" in text or ("[" in text and _OPEN_TAG_AT_END.search(text)):
        raise _ReadsAsMarkup
    return text


def _plain(style: str, text: str) -> str:
    return _as_is(text)


def _styled(style: str, text: str) -> str:
    from rich.markup import escape

    return f"[{style}]{escape(text)}[/{style}]"


def _unit_lines(unit: Unit, esc: Callable[[str], str],
                styled: Callable[[str, str], str]) -> list[str]:
    """The lines of a file's text view, each piece of source text through ``esc`` and each
    styled piece through ``styled``."""
    lines: list[str] = []
    say = lines.append
    position = unit.position

    say(styled("bold", shown(unit.path)))
    for f in unit.functions:
        if f.kind == "host" and not f.launches:
            continue
        line, col = position(f.start)
        tparams = ", ".join(f"{t.type} {t.name}" for t in f.template_params)
        head = f"  {f.kind} {styled('cyan', f.name)}" + (esc(f"<{tparams}>") if tparams else "")
        say(f"{head}  ({esc(where(unit.path, line, col))})")
        for p in f.params:
            flags = [x for x, on in (("const", p.const), ("restrict", p.restrict)) if on]
            say(esc(f"    param {p.name}: {p.type}" + (f"  [{', '.join(flags)}]"
                                                       if flags else "")))
        if f.launch_bounds:
            lb = f.launch_bounds
            say(esc(f"    launch bounds: {lb.max_threads}"
                    + (f", min blocks {lb.min_blocks}" if lb.min_blocks else "")))
        for a in f.attributes:
            say(esc(f"    attribute: {a}"))
        for sd in f.shared:
            dims = "".join(f"[{d}]" for d in sd.dims)
            say(esc(f"    shared{' (extern, dynamic)' if sd.extern else ''}: {sd.type} "
                    f"{sd.name}{dims}"))
        if f.loops:
            loops = ", ".join(
                f"{lp.kind}({lp.var or '?'})@{position(lp.start)[0]}"
                + (f" unroll {lp.unroll}".rstrip() if lp.unroll is not None else "")
                for lp in f.loops)
            say(esc(f"    loops: {loops}"))
        if f.barriers:
            say(f"    barriers: {len(f.barriers)}")
        if f.warp_intrinsics:
            say(esc("    warp intrinsics: " + ", ".join(sorted({c.name for c in
                                                                f.warp_intrinsics}))))
        for lc in f.launches:
            tl = f"<{lc.template_args}>" if lc.template_args else ""
            say(esc(f"    launches {lc.kernel}{tl}<<<{', '.join(lc.config)}>>>"))
    for u in unit.unanalyzable:
        say(f"  {styled('yellow', 'not analyzable')}: kernel {esc(u.name)} at "
            f"{esc(where(unit.path, u.line, u.col))}: {esc(u.reason)}")
    return lines
