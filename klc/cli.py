"""The command line: a thin layer over the Python API (one function per subcommand).

Exit status: 0 success, 1 "nothing to do" where a command says so (``apply`` found no match),
2 on any error. Errors are one clear message on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

from rich.console import Console

from klc import __version__
from klc.errors import KlcError

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

Command = Callable[[argparse.Namespace], int]
_COMMANDS: dict[str, Command] = {}


def command(name: str) -> Callable[[Command], Command]:
    def register(fn: Command) -> Command:
        _COMMANDS[name] = fn
        return fn

    return register


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="klc",
        description="klc, the kernel lineage compiler: structural rewrite rules for CUDA "
        "kernels, learned from expert kernels and applied under a compile/verify/profile gate.",
    )
    ap.add_argument("--version", action="version", version=f"klc {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("parse", help="parse CUDA files and print their kernels and device "
                       "functions, parameters, launch bounds, shared memory and syntax problems")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.command is None:
        ap.print_help()
        return 2
    try:
        return _COMMANDS[args.command](args)
    except KlcError as e:
        err.print(f"klc: error: {e}", markup=False)
        return 2
    except KeyboardInterrupt:
        err.print("klc: interrupted", markup=False)
        return 130
    except BrokenPipeError:
        return 0


# --------------------------------------------------------------------------------------
# klc parse


@command("parse")
def cmd_parse(args: argparse.Namespace) -> int:
    from klc.frontend import parse_file
    from klc.report import unit_summary

    status = 0
    summaries = []
    for path in args.files:
        try:
            unit = parse_file(path)
        except KlcError as e:
            err.print(f"klc: error: {e}", markup=False)
            status = 2
            continue
        if unit.problems:
            status = 2
        summaries.append(unit_summary(unit))
        if not args.json:
            _print_unit(unit)
    if args.json:
        print(json.dumps(summaries, indent=2))
    return status


def _print_unit(unit) -> None:  # noqa: ANN001 - klc.frontend.Unit, imported lazily
    out.print(f"[bold]{unit.path}[/bold]")
    for f in unit.functions:
        if f.kind == "host" and not f.launches:
            continue
        line, col = unit.position(f.start)
        tparams = ", ".join(f"{t.type} {t.name}" for t in f.template_params)
        head = f"  {f.kind} [cyan]{f.name}[/cyan]" + (f"<{tparams}>" if tparams else "")
        out.print(f"{head}  ({unit.path}:{line}:{col})")
        for p in f.params:
            flags = [x for x, on in (("const", p.const), ("restrict", p.restrict)) if on]
            out.print(f"    param {p.name}: {p.type}" + (f"  [{', '.join(flags)}]" if flags
                                                          else ""), markup=False)
        if f.launch_bounds:
            lb = f.launch_bounds
            out.print(f"    launch bounds: {lb.max_threads}"
                      + (f", min blocks {lb.min_blocks}" if lb.min_blocks else ""))
        for a in f.attributes:
            out.print(f"    attribute: {a}", markup=False)
        for s in f.shared:
            dims = "".join(f"[{d}]" for d in s.dims)
            out.print(f"    shared{' (extern, dynamic)' if s.extern else ''}: {s.type} "
                      f"{s.name}{dims}", markup=False)
        if f.loops:
            loops = ", ".join(
                f"{lp.kind}({lp.var or '?'})@{unit.position(lp.start)[0]}"
                + (f" unroll {lp.unroll}".rstrip() if lp.unroll is not None else "")
                for lp in f.loops)
            out.print(f"    loops: {loops}", markup=False)
        if f.barriers:
            out.print(f"    barriers: {len(f.barriers)}")
        if f.warp_intrinsics:
            out.print("    warp intrinsics: " + ", ".join(sorted({c.name for c in
                                                                  f.warp_intrinsics})))
        for lc in f.launches:
            tl = f"<{lc.template_args}>" if lc.template_args else ""
            out.print(f"    launches {lc.kernel}{tl}<<<{', '.join(lc.config)}>>>", markup=False)
    for u in unit.unanalyzable:
        out.print(f"  [yellow]not analyzable[/yellow]: kernel {u.name} at "
                  f"{unit.path}:{u.line}:{u.col}: {u.reason}")
    for p in unit.problems:
        err.print(p.describe(unit.path), markup=False)
