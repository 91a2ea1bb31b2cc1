"""``klc apply``: apply a rule file (or a built-in rule by name: ``klc apply fast_math
k.cu``) to a kernel file; print a unified diff (``--annotate``: the rules of each hunk), or
write the result (``--in-place``, ``-o``), or the sites as JSON. The work is
``klc.rewrite.apply_unit``, as for ``klc batch`` and the Python API.

Exit 0: rewritten; 1: no match or every match refused; 2: bad input.
"""

from __future__ import annotations

import argparse
import json
import sys

from klc.commands import args as arg_types
from klc.commands.console import err
from klc.errors import KlcError


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("apply", help="apply a rule file, or a built-in rule by name, to a "
                       "kernel file (default: print a unified diff)")
    p.add_argument("rule_file", metavar="RULE",
                   help="a .rule file, or the name of a built-in rule or rule file "
                   "(klc list --rules lists them); a file of that name wins")
    p.add_argument("kernel", metavar="KERNEL")
    p.add_argument("--rule", action="append", metavar="NAME",
                   help="apply only this rule of the file (repeatable)")
    p.add_argument("--hole", action="append", default=[], metavar="NAME=VALUE",
                   help="fill a hole (validated against its domain); else its default")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print a unified diff (default)")
    mode.add_argument("--in-place", action="store_true",
                      help="rewrite KERNEL in place (atomically: temporary file + rename)")
    mode.add_argument("-o", "--output", metavar="OUT", type=arg_types.output_path,
                      help="write the result to OUT")
    p.add_argument("--annotate", action="store_true",
                   help="name the rules that made each hunk of the diff (after its @@ line)")
    p.add_argument("--json", action="store_true",
                   help="print the sites with offsets, line:col, bindings and replacements")


def rule_source(arg: str) -> tuple[str, list[str]]:
    """The rule file RULE names and the rules of it to apply: the file itself when it exists
    (a path wins), else a built-in rule or rule file of that name (``klc.rule.builtin_rule``);
    else the file's own error (no such file)."""
    import os

    from klc.rule import builtin_rule

    if not os.path.lexists(arg):
        found = builtin_rule(arg)
        if found is not None:
            return found
        if "/" not in arg and not arg.endswith(".rule"):
            raise KlcError(f"{arg}: no such rule file, and no built-in rule or rule file of "
                           "that name (klc list --rules lists them)")
    return arg, []


def run(args: argparse.Namespace) -> int:
    from klc.cuda.parse import parse_file
    from klc.fsutil import atomic_write
    from klc.report import outcome_json
    from klc.rewrite import apply_unit
    from klc.rule import load_rules, select_rules

    rule_file, named = rule_source(args.rule_file)
    rules = select_rules(load_rules(rule_file), args.rule or named, rule_file)
    holes = arg_types.holes(args.hole)
    unit = parse_file(args.kernel)
    done = apply_unit(unit, rules, holes)
    for note in done.notes:  # (an applicable site left for another run is one)
        err.print(f"klc: note: {note}", markup=False)
    if args.json:
        print(json.dumps(outcome_json(done.outcome), indent=2))
    if not done.changed:
        if not args.json:
            reasons = [f"  {s.match.unit.where(s.match.start)}: {s.rule.name}: {s.reason}"
                       for s in done.refused]
            err.print(f"klc: no rewrite: {len(done.refused)} match(es) refused"
                      if reasons else "klc: no match", markup=False)
            for r in reasons:
                err.print(r, markup=False)
        return 1
    if args.in_place:  # (a link: its target is rewritten; a file with hard links: refused)
        atomic_write(args.kernel, done.source, in_place=True)
    elif args.output:
        atomic_write(args.output, done.source)
    elif not args.json:
        sys.stdout.write(done.diff(args.kernel, annotate=args.annotate))
    return 0
