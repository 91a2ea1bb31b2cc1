"""``klc test``: run the rules' golden cases (:mod:`klc.golden`).

Exit 0: all passed; 1: a case failed.
"""

from __future__ import annotations

import argparse

from klc.commands.console import out


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("test", help="run rule golden tests: <rule>/<case>.cu against "
                       "<case>.expected.cu, or <case>.why for a refusal")
    p.add_argument("dir", nargs="?", default="tests/golden", metavar="DIR")
    p.add_argument("--rules", action="append", metavar="DIR_OR_RULE",
                   help="where to find the rules (default: passes/ and skills/)")
    p.add_argument("--update-golden", action="store_true",
                   help="write the current output as the expected output")


def run(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from klc.golden import run_golden

    results = run_golden(args.dir, args.rules, update=args.update_golden)
    failed = [r for r in results if not r.ok]
    for r in results:  # (a reason quotes code: `partial[blockIdx.x]` is not rich markup)
        mark = "[green]ok[/green]" if r.ok else "[red]FAIL[/red]"
        out.print(f"{mark} {escape(r.case)}" + ("" if r.ok else f": {escape(r.message)}"))
    out.print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0
