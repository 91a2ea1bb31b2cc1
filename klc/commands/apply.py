"""``klc apply``: apply a rule file to a kernel file; print a unified diff, or write the
result (``--in-place``, ``-o``), or the sites as JSON.

Exit 0: rewritten; 1: no match or every match refused; 2: bad input.
"""

from __future__ import annotations

import argparse
import json
import sys

from klc.commands import args as arg_types
from klc.commands.console import err


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("apply", help="apply a rule file to a kernel file (default: print a "
                       "unified diff)")
    p.add_argument("rule_file", metavar="RULE")
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
    p.add_argument("--json", action="store_true",
                   help="print the sites with offsets, line:col, bindings and replacements")


def run(args: argparse.Namespace) -> int:
    from klc.cuda.parse import parse_file
    from klc.fsutil import atomic_write
    from klc.pipeline import apply_rules, spec_of
    from klc.report import outcome_json
    from klc.rule import load_rules, select_rules

    rules = select_rules(load_rules(args.rule_file), args.rule, args.rule_file)
    holes = arg_types.holes(args.hole)
    unit = parse_file(args.kernel)
    spec = spec_of(unit)
    outcome = apply_rules(unit, rules, holes, spec)
    for note in outcome.notes:
        err.print(f"klc: note: {note}", markup=False)
    for site, why in outcome.skipped:  # applicable, but left for another run
        err.print(f"klc: note: {unit.where(site.match.start)}: {site.rule.name}: not applied "
                  f"in this run: {why}", markup=False)
    if args.json:
        print(json.dumps(outcome_json(outcome), indent=2))
    if not outcome.changed:
        if not args.json:
            reasons = [f"  {s.match.unit.where(s.match.start)}: {s.rule.name}: {s.reason}"
                       for s in outcome.refused]
            err.print(f"klc: no rewrite: {len(outcome.refused)} match(es) refused"
                      if reasons else "klc: no match", markup=False)
            for r in reasons:
                err.print(r, markup=False)
        return 1
    if args.in_place:  # (a link: its target is rewritten; a file with hard links: refused)
        atomic_write(args.kernel, outcome.source, in_place=True)
    elif args.output:
        atomic_write(args.output, outcome.source)
    elif not args.json:
        from klc.api import unified_diff

        sys.stdout.write(unified_diff(unit.source, outcome.source, args.kernel))
    return 0
