"""``klc ast``: print a kernel's syntax tree, or how an anchor pattern is compiled.
"""

from __future__ import annotations

import argparse

from klc.commands.console import out
from klc.errors import KlcError


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("ast", help="print a kernel's syntax tree, or how a pattern parses")
    p.add_argument("kernel", metavar="KERNEL", nargs="?")
    p.add_argument("--pattern", metavar="P", help="show how an anchor pattern is compiled")


def run(args: argparse.Namespace) -> int:
    from klc.cuda.parse import parse_file
    from klc.report import format_tree

    if args.pattern:
        from klc.match import compile_pattern
        from klc.report import format_pattern
        from klc.rule.ruleset import check_nesting

        # the bound of rule files: the pattern compiler and the printer recurse on nesting
        check_nesting(args.pattern, "--pattern")
        try:
            pattern = compile_pattern(args.pattern, "--pattern")
            shown_pattern = format_pattern(pattern)
        except RecursionError:
            raise KlcError("--pattern: nested too deeply to compile; split it") from None
        out.print(shown_pattern, markup=False)
    if args.kernel:
        unit = parse_file(args.kernel)
        out.print(format_tree(unit), markup=False)
    if not args.pattern and not args.kernel:
        raise KlcError("ast: give a KERNEL file, --pattern P, or both")
    return 0
