"""The command line: the argument parser and the dispatch, nothing else.

Every subcommand is a module of :mod:`klc.commands` that defines ``add_parser(sub)`` (its
argparse subparser) and ``run(args) -> int``; its heavy imports stay inside ``run`` so that
``klc --help`` stays fast.

Exit status: 0 success, 1 "nothing to do" where a command says so (``apply`` found no match),
2 on any error. Errors are one clear message on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence

from klc.commands import (
    apply,
    ast,
    batch,
    check,
    gate,
    learn,
    lineage,
    optimize,
    parse,
    spec,
    test,
)
from klc.commands import list as list_
from klc.commands.args import add_build_flags
from klc.commands.console import err
from klc.errors import KlcError, terminal_safe

Command = Callable[[argparse.Namespace], int]

# in the order ``klc --help`` lists them (each module keeps its heavy imports inside ``run``)
COMMAND_MODULES = (parse, apply, list_, ast, test, gate, check, lineage, learn, optimize, batch,
                   spec)
# the commands that read rules: the rule loader's vocabulary is installed before they run
READS_RULES = frozenset({"apply", "list", "test", "check", "lineage", "learn", "optimize",
                         "batch"})
_COMMANDS: dict[str, Command] = {}


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="klc",
        description="klc, the kernel lineage compiler: structural rewrite rules for CUDA "
        "kernels, learned from expert kernels and applied under a compile/verify/profile gate.",
    )
    ap.add_argument("--version", action=_Version, nargs=0,
                    help="show program's version number and exit")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    for mod in COMMAND_MODULES:
        name = mod.__name__.rpartition(".")[2]
        mod.add_parser(sub)
        _COMMANDS[name] = mod.run
    for name, p in sub.choices.items():  # every command reads files: one limit for all
        p.add_argument("--max-bytes", metavar="SIZE",
                       help="refuse an input file (source, rule) larger than SIZE (e.g. 64M; "
                       "default 16M, far above any real source file; also $KLC_MAX_BYTES)")
        if name != "spec":  # (spec's subcommands take them: klc spec init -I inc k.cu)
            add_build_flags(p)
    return ap


class _Version(argparse.Action):
    """``--version``: klc's version, read from the package metadata only when asked."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        import klc

        print(f"klc {klc.__version__}")
        parser.exit()


def _writable_streams() -> None:
    """Output whose encoding (``PYTHONIOENCODING=ascii``, a C locale) cannot write a path or a
    reason (a folder named ``ünï``) writes what it cannot encode as backslash escapes, not a
    traceback halfway through the listing."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "strict") == "strict":
            # (a stream that cannot be reconfigured is left as it is)
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    from klc.interrupts import sigint_guard

    try:
        with sigint_guard(ending=True):  # a second Ctrl-C does not cut the first's cleanup
            return _main(argv)
    except KeyboardInterrupt:
        err.print("klc: interrupted", markup=False)
        return 130


def _main(argv: Sequence[str] | None) -> int:
    _writable_streams()
    ap = build_parser()
    args = ap.parse_args(argv)
    from klc.interrupts import tune_gc

    tune_gc()
    if args.command is None:
        ap.print_help()
        return 2
    try:
        if getattr(args, "max_bytes", None):  # (the environment carries it to workers)
            from klc.fsutil import MAX_BYTES_ENV, parse_size

            os.environ[MAX_BYTES_ENV] = str(parse_size(args.max_bytes))
        if hasattr(args, "include_dirs"):  # this command's, never an earlier one's in-process
            from klc.cuda.flags import from_args, set_flags

            set_flags(from_args(args.include_dirs, args.defines, args.include_from))
        if args.command in READS_RULES:
            from klc import plugins

            plugins.load()
        return _COMMANDS[args.command](args)
    except KlcError as e:
        err.print(f"klc: error: {terminal_safe(str(e))}", markup=False)
        return 2
    except KeyboardInterrupt:
        err.print("klc: interrupted", markup=False)
        return 130
    except BrokenPipeError:
        return 0
