"""``klc list``: which rules apply to kernel files (or folders of them), where, and
(``--all``) why the others do not; as text, JSON, SARIF or GitHub annotations
(:mod:`klc.findings`). The files are listed in worker processes by :mod:`klc.batch.listing`.

Exit 0: listed; 2: a file unreadable or with syntax errors (the rest is still listed).
"""

from __future__ import annotations

import argparse
import json

from rich.text import Text

from klc.commands import args as arg_types
from klc.commands.console import err, out
from klc.errors import KlcError, shown


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("list", help="list the rules that apply to kernel files (or folders "
                       "of them), where, and (--all) why the others do not")
    p.add_argument("kernel", metavar="KERNEL", nargs="+",
                   help=".cu/.cuh files or folders (walked for .cu/.cuh files)")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                   help="worker processes for many files (default 1)")
    p.add_argument("--tree-only", action="store_true",
                   help="guards use tree-sitter facts only, never libclang: faster; a guard "
                   "that needs clang then says so and fails closed")
    p.add_argument("--skills", action="append", metavar="DIR_OR_RULE",
                   help="rule files or folders (default: the skills library)")
    p.add_argument("--all", action="store_true",
                   help="also list matches whose context or guards failed, with the reason")
    p.add_argument("--json", action="store_true", help="print JSON instead of text "
                   "(--format json)")
    p.add_argument("--format", choices=("text", "json", "sarif", "github"), default=None,
                   help="text (default), json, sarif (SARIF 2.1.0 for code scanning) or "
                   "github (workflow annotations)")


def run(args: argparse.Namespace) -> int:
    from klc.batch.listing import kernel_files, list_paths
    from klc.rule import default_skill_dirs

    arg_types.check_jobs(args.jobs)
    if args.json and args.format not in (None, "json"):
        raise KlcError(f"--json and --format {args.format}: give one of them")
    args.json = args.json or args.format == "json"
    rule_paths = args.skills or default_skill_dirs()
    paths, problems = kernel_files(args.kernel)
    if args.format in ("sarif", "github"):  # findings for code scanning (klc/findings.py)
        from klc.findings import write_findings

        found = list(list_paths(paths, rule_paths, show_all=args.all,
                                tree_only=args.tree_only, jobs=args.jobs))
        for path, why in problems:
            err.print(f"klc: error: {shown(path)}: {why}", markup=False)
        for listing in found:
            if listing.error:
                err.print(f"klc: error: {listing.error}", markup=False)
            for problem in listing.problems:
                err.print(f"klc: error: {problem}", markup=False)
        write_findings(args.format, found, rule_paths, problems)
        return 2 if problems or any(lst.error or lst.problems for lst in found) else 0
    failed = len(problems)
    for path, why in problems:
        err.print(f"klc: error: {shown(path)}: {why}", markup=False)
    listings = []
    plain = not (out.is_terminal or out.color_system is not None)
    for listing in list_paths(paths, rule_paths, show_all=args.all, tree_only=args.tree_only,
                              jobs=args.jobs, json_sites=args.json,
                              render="" if args.json else "plain" if plain else "styled"):
        if listing.error:
            failed += 1
            err.print(f"klc: error: {listing.error}", markup=False)
            continue
        if listing.problems:  # listed all the same, outside the syntax errors
            failed += 1
            for problem in listing.problems:
                err.print(f"klc: error: {problem}", markup=False)
        if args.json:
            listings.append(listing)
            continue
        if not listing.pieces and not listing.text:
            if len(paths) == 1:
                out.print(f"{shown(listing.path)}: no rule applies ({listing.n_rules} rules, "
                          f"{listing.refused} refused matches; --all shows why)", markup=False)
            continue
        if plain:  # a pipe or a file: the worker's plain text, as it is
            out.file.write(listing.text)
        else:  # a terminal: one rich Text styled by span (no markup to parse: a path or a
            text = Text()  # reason holding "[" prints as it is)
            for piece, style in listing.pieces:
                text.append(piece, style)
            text.rstrip()
            out.print(text)
    if args.json:
        sites = [s for lst in listings for s in lst.sites]
        print(json.dumps(sites, indent=2))
    return 2 if failed else 0
