"""The command line: a thin layer over the Python API (one function per subcommand).

Exit status: 0 success, 1 "nothing to do" where a command says so (``apply`` found no match),
2 on any error. Errors are one clear message on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from klc import __version__
from klc.errors import KlcError

if TYPE_CHECKING:
    from klc.frontend import Unit

out = Console(highlight=False, soft_wrap=True, emoji=False)  # "f.cu:100:5" is no emoji
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)

Command = Callable[[argparse.Namespace], int]
_COMMANDS: dict[str, Command] = {}


def command(name: str) -> Callable[[Command], Command]:
    def register(fn: Command) -> Command:
        _COMMANDS[name] = fn
        return fn

    return register


# Commands that live in their own module under klc/commands/: each module defines
# ``add_parser(sub)`` (its argparse subparser) and ``run(args) -> int``; its heavy imports stay
# inside ``run`` so that ``klc --help`` stays fast.
_COMMAND_MODULES = ("lineage", "learn", "optimize", "batch", "spec")


def _command_modules() -> list[tuple[str, object]]:
    import importlib

    found = []
    for name in _COMMAND_MODULES:
        try:
            mod = importlib.import_module(f"klc.commands.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"klc.commands.{name}":
                raise
            continue
        found.append((name, mod))
    return found


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
    mode.add_argument("-o", "--output", metavar="OUT", help="write the result to OUT")
    p.add_argument("--json", action="store_true",
                   help="print the sites with offsets, line:col, bindings and replacements")

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

    p = sub.add_parser("ast", help="print a kernel's syntax tree, or how a pattern parses")
    p.add_argument("kernel", metavar="KERNEL", nargs="?")
    p.add_argument("--pattern", metavar="P", help="show how an anchor pattern is compiled")

    p = sub.add_parser("test", help="run rule golden tests: <rule>/<case>.cu against "
                       "<case>.expected.cu, or <case>.why for a refusal")
    p.add_argument("dir", nargs="?", default="tests/golden", metavar="DIR")
    p.add_argument("--rules", action="append", metavar="DIR_OR_RULE",
                   help="where to find the rules (default: passes/ and skills/)")
    p.add_argument("--update-golden", action="store_true",
                   help="write the current output as the expected output")

    p = sub.add_parser("gate", help="compile, verify and profile a kernel (against a reference "
                       "with --against) under its klc-spec; exit 0 passed or compiled-only, "
                       "1 failed")
    p.add_argument("kernel", metavar="KERNEL", help="a .cu file with a klc-spec block")
    p.add_argument("--against", metavar="REFERENCE",
                   help="the reference kernel file (default: the kernel against itself)")
    p.add_argument("--arch", help="target arch for NVRTC, e.g. sm_90 (default: the device's, "
                   "or sm_90 without a GPU)")
    p.add_argument("--stages", default="compile,verify,profile",
                   help="comma-separated stages to run (default: compile,verify,profile)")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="seconds for verify and profile together (default: the spec's "
                   "timeout_s, or 60)")
    p.add_argument("--json", action="store_true", help="print the gate record as JSON")

    p = sub.add_parser("check", help="load and validate rule files or folders (syntax, "
                       "predicates, metavariables, holes, anchors and templates that parse); "
                       "exit 0 all valid, 2 on any error")
    p.add_argument("paths", nargs="*", metavar="RULE", help=".rule files or folders of them")
    p.add_argument("--predicates", action="store_true",
                   help="list the guard predicates rules may use, with what each checks")
    _add_module_commands(sub)
    for p in sub.choices.values():  # every command reads files: one limit for all
        p.add_argument("--max-bytes", metavar="SIZE",
                       help="refuse an input file (source, rule) larger than SIZE (e.g. 64M; "
                       "default 16M, far above any real source file; also $KLC_MAX_BYTES)")
    return ap


def _add_module_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    for name, mod in _command_modules():
        mod.add_parser(sub)  # type: ignore[attr-defined]
        _COMMANDS[name] = mod.run  # type: ignore[attr-defined]


def main(argv: Sequence[str] | None = None) -> int:
    from klc.interrupts import sigint_guard

    try:
        with sigint_guard(ending=True):  # a second Ctrl-C does not cut the first's cleanup
            return _main(argv)
    except KeyboardInterrupt:
        err.print("klc: interrupted", markup=False)
        return 130


def _main(argv: Sequence[str] | None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    from klc.listing import tune_gc

    tune_gc()
    if args.command is None:
        ap.print_help()
        return 2
    try:
        if getattr(args, "max_bytes", None):  # (the environment carries it to workers)
            from klc.fsutil import MAX_BYTES_ENV, parse_size

            os.environ[MAX_BYTES_ENV] = str(parse_size(args.max_bytes))
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
    """Print each file's model; a file that cannot be read, or that keeps syntax errors after
    recovery, sets exit status 2, and the others are still printed."""
    from klc.frontend import parse_file
    from klc.report import unit_summary

    status = 0
    summaries = []
    for path in args.files:
        try:
            unit = parse_file(path)
        except KlcError as e:
            err.print(f"klc: error: {e}", markup=False, emoji=False)
            status = 2
            continue
        if unit.problems:
            status = 2
        summaries.append(unit_summary(unit))
        if not args.json:
            _print_unit(unit)
        for p in unit.problems:
            err.print(f"klc: error: {p.describe(unit.path)}", markup=False, emoji=False)
    if args.json:
        print(json.dumps(summaries, indent=2))
    return status


def _print_unit(unit: Unit) -> None:
    """The text view of ``klc parse``. Source text is escaped for rich (a ``[`` in a type
    would be read as markup) and emoji codes are off (``file:100:1`` is not ``:100:``)."""
    from rich.markup import escape

    def say(line: str) -> None:
        out.print(line, emoji=False)

    say(f"[bold]{escape(unit.path)}[/bold]")
    for f in unit.functions:
        if f.kind == "host" and not f.launches:
            continue
        line, col = unit.position(f.start)
        tparams = ", ".join(f"{t.type} {t.name}" for t in f.template_params)
        head = f"  {f.kind} [cyan]{escape(f.name)}[/cyan]" + (
            escape(f"<{tparams}>") if tparams else "")
        say(f"{head}  ({escape(unit.path)}:{line}:{col})")
        for p in f.params:
            flags = [x for x, on in (("const", p.const), ("restrict", p.restrict)) if on]
            say(escape(f"    param {p.name}: {p.type}" + (f"  [{', '.join(flags)}]"
                                                          if flags else "")))
        if f.launch_bounds:
            lb = f.launch_bounds
            say(escape(f"    launch bounds: {lb.max_threads}"
                       + (f", min blocks {lb.min_blocks}" if lb.min_blocks else "")))
        for a in f.attributes:
            say(escape(f"    attribute: {a}"))
        for sd in f.shared:
            dims = "".join(f"[{d}]" for d in sd.dims)
            say(escape(f"    shared{' (extern, dynamic)' if sd.extern else ''}: {sd.type} "
                       f"{sd.name}{dims}"))
        if f.loops:
            loops = ", ".join(
                f"{lp.kind}({lp.var or '?'})@{unit.position(lp.start)[0]}"
                + (f" unroll {lp.unroll}".rstrip() if lp.unroll is not None else "")
                for lp in f.loops)
            say(escape(f"    loops: {loops}"))
        if f.barriers:
            say(f"    barriers: {len(f.barriers)}")
        if f.warp_intrinsics:
            say(escape("    warp intrinsics: " + ", ".join(sorted({c.name for c in
                                                                   f.warp_intrinsics}))))
        for lc in f.launches:
            tl = f"<{lc.template_args}>" if lc.template_args else ""
            say(escape(f"    launches {lc.kernel}{tl}<<<{', '.join(lc.config)}>>>"))
    for u in unit.unanalyzable:
        say(f"  [yellow]not analyzable[/yellow]: kernel {escape(u.name)} at "
            f"{escape(unit.path)}:{u.line}:{u.col}: {escape(u.reason)}")


# --------------------------------------------------------------------------------------
# klc apply / list / ast / test


def _parse_holes(items: list[str]) -> dict[str, str]:
    holes: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise KlcError(f"--hole {item!r}: expected NAME=VALUE")
        holes[name.strip().lstrip("?")] = value.strip()
    return holes


@command("apply")
def cmd_apply(args: argparse.Namespace) -> int:
    from klc.frontend import parse_file
    from klc.fsutil import atomic_write
    from klc.library import select_rules
    from klc.pipeline import apply_rules, spec_of
    from klc.report import outcome_json
    from klc.rules import load_rules

    rules = select_rules(load_rules(args.rule_file), args.rule, args.rule_file)
    holes = _parse_holes(args.hole)
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


@command("list")
def cmd_list(args: argparse.Namespace) -> int:
    from klc.library import default_skill_dirs
    from klc.listing import kernel_files, list_paths

    if args.jobs < 1:
        raise KlcError(f"-j {args.jobs}: the number of workers must be at least 1")
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
            err.print(f"klc: error: {path}: {why}", markup=False)
        for listing in found:
            if listing.error:
                err.print(f"klc: error: {listing.error}", markup=False)
            for problem in listing.problems:
                err.print(f"klc: error: {problem}", markup=False)
        write_findings(args.format, found, rule_paths, problems)
        return 2 if problems or any(lst.error or lst.problems for lst in found) else 0
    failed = len(problems)
    for path, why in problems:
        err.print(f"klc: error: {path}: {why}", markup=False)
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
                out.print(f"{listing.path}: no rule applies ({listing.n_rules} rules, "
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


@command("ast")
def cmd_ast(args: argparse.Namespace) -> int:
    from klc.frontend import parse_file
    from klc.report import format_tree

    if args.pattern:
        from klc.match import compile_pattern
        from klc.report import format_pattern

        pattern = compile_pattern(args.pattern, "--pattern")
        out.print(format_pattern(pattern), markup=False)
    if args.kernel:
        unit = parse_file(args.kernel)
        out.print(format_tree(unit), markup=False)
    if not args.pattern and not args.kernel:
        raise KlcError("ast: give a KERNEL file, --pattern P, or both")
    return 0


@command("test")
def cmd_test(args: argparse.Namespace) -> int:
    from klc.golden import run_golden

    results = run_golden(args.dir, args.rules, update=args.update_golden)
    failed = [r for r in results if not r.ok]
    for r in results:
        mark = "[green]ok[/green]" if r.ok else "[red]FAIL[/red]"
        out.print(f"{mark} {r.case}" + ("" if r.ok else f": {r.message}"))
    out.print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


# --------------------------------------------------------------------------------------
# klc gate


@command("gate")
def cmd_gate(args: argparse.Namespace) -> int:
    from klc.frontend import read_source
    from klc.gate import gate
    from klc.gate.report import print_record

    reference = read_source(args.against) if args.against else None
    stages = tuple(s.strip() for s in args.stages.split(",") if s.strip())
    record = gate(read_source(args.kernel), args.kernel, reference=reference,
                  reference_path=args.against, arch=args.arch, stages=stages,
                  timeout_s=args.timeout)
    if args.json:
        print(json.dumps(record.to_json(), indent=2))
    else:
        print_record(record, out)
    return 1 if record.verdict == "failed" else 0


# --------------------------------------------------------------------------------------
# klc check


@command("check")
def cmd_check(args: argparse.Namespace) -> int:
    from klc.guards import PREDICATES
    from klc.rules import check_rule_paths

    if args.predicates:
        for pred in sorted(PREDICATES.values(), key=lambda p: p.name):
            out.print(f"{pred.signature}\n    {pred.doc}", markup=False, emoji=False)
    if not args.paths:
        if args.predicates:
            return 0
        raise KlcError("check: give .rule files or folders (or --predicates)")
    rules, errors = check_rule_paths(args.paths)
    count = f"{len(rules)} rule{'s' if len(rules) != 1 else ''} ok"
    for message in errors:
        err.print(message, markup=False, emoji=False)
    if errors:
        err.print(f"{len(errors)} error{'s' if len(errors) != 1 else ''}; {count}",
                  markup=False, emoji=False)
        return 2
    out.print(count, markup=False, emoji=False)
    return 0
