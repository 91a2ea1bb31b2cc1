"""``klc check``: load and validate rule files or folders; ``--predicates`` lists the
guard predicates.

Exit 0: all valid; 2: any error.
"""

from __future__ import annotations

import argparse

from klc.commands.console import err, out
from klc.errors import KlcError


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("check", help="load and validate rule files or folders (syntax, "
                       "predicates, metavariables, holes, anchors and templates that parse); "
                       "exit 0 all valid, 2 on any error")
    p.add_argument("paths", nargs="*", metavar="RULE", help=".rule files or folders of them")
    p.add_argument("--predicates", action="store_true",
                   help="list the guard predicates rules may use, with what each checks")


def run(args: argparse.Namespace) -> int:
    from klc.guards import PREDICATES
    from klc.rule import RuleSet

    if args.predicates:
        for pred in sorted(PREDICATES.values(), key=lambda p: p.name):
            out.print(f"{pred.signature}\n    {pred.doc}", markup=False, emoji=False)
    if not args.paths:
        if args.predicates:
            return 0
        raise KlcError("check: give .rule files or folders (or --predicates)")
    loaded = RuleSet.load(args.paths, strict=False, check=True)
    errors = loaded.errors
    count = f"{_checked(len(loaded.rules), loaded.defines)} ok"
    for message in errors:
        err.print(message, markup=False, emoji=False)
    if errors:
        err.print(f"{len(errors)} error{'s' if len(errors) != 1 else ''}; {count}",
                  markup=False, emoji=False)
        return 2
    out.print(count, markup=False, emoji=False)
    return 0


def _plural(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def _checked(rules: int, defines: int) -> str:
    """What was checked: ``3 rules``, ``22 guard definitions`` (a file of named guards
    only), ``3 rules and 2 guard definitions``."""
    if not defines:
        return _plural(rules, "rule")
    if not rules:
        return _plural(defines, "guard definition")
    return f"{_plural(rules, 'rule')} and {_plural(defines, 'guard definition')}"
