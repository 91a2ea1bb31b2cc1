"""``klc batch DIR…``: apply rules (or the forward optimizer) to every kernel of a tree, in
parallel, with a journal to resume from; the engine is :mod:`klc.batch`.

Exit status: 0 every file was processed (rewritten, unchanged, or its matches refused by a
guard); 1 some file failed (unreadable, not CUDA source, a syntax error left after recovery,
a failed gate, with ``--out`` another file of the tree not copied), or no ``.cu``/``.cuh``
file was found; 2 the batch could not start (a rule
file that does not load, a bad hole value, an ``--out`` inside an input tree, a missing
input, ``--optimize`` without the optimizer) and nothing was touched; 130 interrupted
(every file is either as it was or completely written; ``--resume`` continues).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from klc.commands import args as arg_types
from klc.commands.optimize import add_llm_options, check_llm_options
from klc.errors import KlcError, shown, terminal_safe


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "batch", help="apply rules (or optimize) to every .cu/.cuh file under folders, in "
        "parallel, resumable; exit 0 ok, 1 some file failed, 2 nothing done",
        description="Walk folders for .cu/.cuh files and apply the rules to each (default: "
        "the skills library), in parallel worker processes or on Ray. Without --out, "
        "--in-place or --diff it only reports what it would do. Exit status: 0 every file "
        "processed, 1 some file failed (or no file found), 2 the batch could not start "
        "(nothing touched), 130 interrupted (--resume continues).")
    p.add_argument("roots", nargs="+", metavar="DIR", help="folders (or files) to process")
    rules = p.add_mutually_exclusive_group()
    rules.add_argument("--rule", action="append", metavar="RULE",
                       help="a .rule file to apply, or a built-in rule or rule file by name "
                       "(klc list --rules; repeatable)")
    rules.add_argument("--skills", action="append", metavar="DIR",
                       help="a folder of .rule files (repeatable; default: the skills library)")
    p.add_argument("--only", action="append", metavar="NAME",
                   help="apply only the rule with this name (repeatable)")
    p.add_argument("--hole", action="append", default=[], metavar="NAME=VALUE",
                   help="fill a hole (validated against its domain); else its default")
    p.add_argument("--tree-only", action="store_true",
                   help="guards use tree-sitter facts only, no libclang: faster; a guard that "
                   "needs libclang refuses its site, saying so")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--out", metavar="DIR",
                      help="write the tree, rewritten, to DIR (mirrors the input tree)")
    mode.add_argument("--in-place", action="store_true",
                      help="rewrite files in place, each atomically (temporary file + rename)")
    mode.add_argument("--diff", action="store_true",
                      help="print a unified diff of every rewritten file, write nothing")
    p.add_argument("--annotate", action="store_true",
                   help="name the rules that made each hunk of the diffs (--diff, an HTML "
                   "report), after its @@ line, as klc apply --annotate does")
    p.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                   help="worker processes (default: the CPUs this process may use)")
    p.add_argument("--gate", action="store_true",
                   help="gate each rewritten file against its original (compile, verify, "
                   "profile; one gate worker per GPU); a failed gate keeps the original")
    p.add_argument("--no-compile-check", action="store_true",
                   help="without --gate, write rewrites without compiling them first (by "
                   "default each is compiled with NVRTC, no GPU needed, and kept only if it "
                   "compiles where its original does)")
    p.add_argument("--gate-stages", metavar="STAGES",
                   help="--gate: the stages to run, comma-separated (default: compile,verify,"
                   "profile; verify and profile need a GPU, and without one the batch refuses "
                   "to start unless --gate-stages compile asks for compiling alone)")
    p.add_argument("--arch", help="gate: NVRTC target arch, e.g. sm_90 (also the compile "
                   "check's)")
    p.add_argument("--gate-timeout", type=arg_types.seconds, metavar="S",
                   help="gate: seconds for verify and profile of one file")
    p.add_argument("--optimize", action="store_true",
                   help="run the forward optimizer on each file instead of applying the rules "
                   "once")
    p.add_argument("--filler", choices=("search", "llm"), default=None,
                   help="--optimize: how holes are filled (default: the optimizer's)")
    p.add_argument("--model", metavar="NAME", help="--optimize --filler llm: the model name")
    add_llm_options(p, "--optimize ")
    p.add_argument("--budget", type=int, metavar="N",
                   help="--optimize: gate trials per file on average (default: the "
                   "optimizer's, 30): the batch shares N x files by headroom")
    p.add_argument("--total-budget", type=int, metavar="N",
                   help="--optimize: the one budget of gate trials shared by all files, more "
                   "to the files further from the speed-of-light floor (default: --budget x "
                   "files)")
    p.add_argument("--target-sol", type=float, metavar="F",
                   help="--optimize: stop at this fraction of speed of light")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted batch from its journal (same command line)")
    p.add_argument("--journal", metavar="FILE",
                   help="the journal (default: OUT/.klc-batch.jsonl with --out, "
                   "./.klc-batch.jsonl with --in-place)")
    p.add_argument("--report", metavar="FILE", help="write a report: FILE.json, FILE.md "
                   "(with FILE.png, the plot of time and %% of SOL per file, where klc-cuda[plot] "
                   "is installed) or FILE.html (a page with the plot and every change's diff)")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="skip files and folders whose name or path under the input matches "
                   "GLOB (repeatable)")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="where the work runs: local processes (default) or Ray tasks")
    p.add_argument("--address", metavar="ADDR",
                   help="--executor ray: the cluster to join (default: RAY_ADDRESS, or a new "
                   "local instance)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress bar and no summary table (failures are still printed)")


def _config(args: argparse.Namespace) -> Any:
    from klc.batch import BatchConfig
    from klc.rule import default_skill_dirs

    opts: list[tuple[str, Any]] = []
    names = {"llm_timeout": "llm_timeout_s", "llm_retries": "llm_retries"}
    for key in ("filler", "model", "llm_timeout", "llm_retries", "budget", "total_budget",
                "target_sol"):
        value = getattr(args, key)
        if value is not None:
            if not args.optimize:
                raise KlcError(f"--{key.replace('_', '-')} is an --optimize option")
            if key in ("budget", "total_budget") and value < 1:
                raise KlcError(f"--{key.replace('_', '-')} {value}: give at least 1 gate "
                               "trial")
            opts.append((names.get(key, key), value))
    if args.optimize:
        check_llm_options(args)
    if args.annotate and not (args.diff or (args.report or "").lower().endswith(".html")):
        raise KlcError("--annotate labels the hunks of diffs: give --diff or --report "
                       "FILE.html")
    if args.annotate and args.optimize:
        raise KlcError("--annotate labels the hunks of one run of rules; an --optimize "
                       "report names the rule of each step (--report)")
    if args.tree_only and args.optimize:
        raise KlcError("--tree-only applies rules once; --optimize lists sites its own way")
    stages: tuple[str, ...] = ("compile", "verify", "profile")
    if args.gate_stages is not None:
        if not args.gate:
            raise KlcError("--gate-stages needs --gate")
        stages = tuple(dict.fromkeys(s.strip() for s in args.gate_stages.split(",")
                                     if s.strip()))
        if stages and "compile" not in stages:
            stages = ("compile", *stages)  # nothing is verified that was not compiled
    if args.gate_timeout is not None and not (args.gate or args.optimize):
        raise KlcError("--gate-timeout needs --gate or --optimize")
    if args.arch and not (args.gate or args.optimize or _compile_check(args)):
        raise KlcError("--arch needs --gate, --optimize, or a compile check (--out, --in-place "
                       "or --diff without --no-compile-check)")
    paths, named = _rule_paths(args.rule) if args.rule else \
        (args.skills or default_skill_dirs(), [])
    return BatchConfig.from_paths(paths, rule_names=tuple(args.only or named),
                                  holes=tuple(arg_types.holes(args.hole).items()), gate=args.gate,
                                  optimize=args.optimize, arch=args.arch,
                                  gate_timeout=args.gate_timeout,
                                  optimize_options=tuple(opts), tree_only=args.tree_only,
                                  compile_check=_compile_check(args), gate_stages=stages,
                                  annotate=args.annotate)


def _rule_paths(given: list[str]) -> tuple[list[str], list[str]]:
    """The rule files ``--rule`` names (a file, or a built-in rule or rule file by name, as
    ``klc apply`` takes it) and, when one of them names a single rule, the rules to apply:
    that rule and every rule of the files named whole."""
    from klc.commands.apply import rule_source
    from klc.rule import load_rules

    found = [rule_source(g) for g in given]
    paths = list(dict.fromkeys(path for path, _ in found))
    if not any(names for _, names in found):
        return paths, []
    names = [n for path, only in found
             for n in (only or [r.name for r in load_rules(path)])]
    return paths, list(dict.fromkeys(names))


def _compile_check(args: argparse.Namespace) -> bool:
    """Ungated rewrites that are written or shown are compile-checked, unless told not to."""
    writes = bool(args.out or args.in_place or args.diff)
    return writes and not (args.gate or args.optimize or args.no_compile_check)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from klc.batch import FAILED, REWRITTEN, BatchOptions, run_batch
    from klc.batch.listing import cpus
    from klc.interrupts import held_off

    err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
    if args.report:
        from klc.htmlreport import check_report_path

        check_report_path(args.report)
    if args.address and args.executor != "ray":
        raise KlcError("--address needs --executor ray")
    config = _config(args)
    mode = "out" if args.out else "in_place" if args.in_place else "diff" if args.diff \
        else "check"
    jobs = arg_types.check_jobs(args.jobs) if args.jobs is not None else cpus()
    options = BatchOptions(roots=args.roots, mode=mode, out_dir=args.out,
                           exclude=args.exclude, jobs=jobs,
                           resume=args.resume, journal=args.journal, executor=args.executor,
                           address=args.address,
                           diffs=bool(args.report) and args.report.lower().endswith(".html"))
    show = not args.quiet
    stdout = sys.stdout  # diffs go here, never through the progress bar's console (stderr)
    progress = Progress(TextColumn("[bold]klc batch"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[rate]}"), TimeElapsedColumn(),
                        TimeRemainingColumn(), console=err, disable=not show, transient=True,
                        redirect_stdout=False, redirect_stderr=False)
    task = progress.add_task("files", total=None, rate="")
    state = {"done": 0}

    def on_start(total: int) -> None:
        # started here, not around run_batch: its refresh thread must not exist yet when the
        # batch forks its workers (klc.batch.LocalExecutor.prefork); whole or not at all
        # when a Ctrl-C comes (``held_off``: the ``finally`` below stops it)
        with held_off():
            progress.start()
            progress.update(task, total=total)

    def on_result(res: Any) -> None:
        state["done"] += 1
        elapsed = progress.tasks[0].elapsed or 0.0
        rate = f"{state['done'] / elapsed:.0f} files/s" if elapsed > 0.5 else ""
        progress.update(task, advance=1, rate=rate)
        if res.diff and mode == "diff":  # (an HTML report keeps the diffs too)
            stdout.write(res.diff)
            stdout.flush()
        if res.status in FAILED:  # the reason names the file (and line:col) and the cause
            progress.console.print(f"klc: [red]error[/red]: {escape(terminal_safe(res.reason))}",
                                   emoji=False)

    try:
        summary = run_batch(config, options, on_start, on_result)
    finally:
        with held_off():
            progress.stop()
    for why in summary.copy_failures:
        err.print(f"klc: error: not copied into {shown(args.out)}: {terminal_safe(why)}",
                  markup=False, emoji=False)
    for note in summary.notes:
        err.print(f"klc: note: {terminal_safe(note)}", markup=False, emoji=False)
    for r in summary.results:
        if r.refused_by.get("compile"):
            err.print(f"klc: kept {shown(r.path)} as it was: {terminal_safe(r.reason)}",
                      markup=False, emoji=False)
    if show:
        _print_summary(err, summary, options)
    if args.report:
        _write_report(args.report, summary)
    if summary.interrupted:
        err.print("klc: interrupted: every file is either as it was or completely written"
                  + ("; run the same command with --resume to continue"
                     if mode in ("out", "in_place") else ""), markup=False)
        return 130
    if not summary.results:
        err.print(f"klc: no .cu/.cuh files under {', '.join(args.roots)}", markup=False)
        return 1
    rewrote = any(r.status == REWRITTEN for r in summary.results)
    if mode == "check" and rewrote and show:
        err.print("klc: nothing written (give --out DIR, --in-place or --diff)", markup=False)
    elif mode in ("out", "in_place") and rewrote and show and not (config.gate
                                                                   or config.optimize):
        err.print("klc: note: the rewrites were not gated: the guards make them correct where "
                  "they hold, not faster on this kernel (--gate compiles, verifies and times "
                  "each one against its original and keeps the original when slower)",
                  markup=False)
    return 1 if summary.failed else 0


def _print_summary(err: Any, summary: Any, options: Any) -> None:
    from rich.table import Table

    from klc.batch import SUMMARY_LABELS

    counts = summary.counts()
    table = Table(title=f"klc batch: {summary.elapsed_s:.1f} s, {options.executor}, "
                  f"-j {options.jobs}" + (f", {summary.gpus} GPU(s)" if summary.gpus else ""),
                  title_justify="left")
    table.add_column("what")
    table.add_column("count", justify="right")
    for key, label in SUMMARY_LABELS.items():
        if (key == "resumed" and not summary.resumed) or (key in (
                "gate_slower", "compile_kept", "compile_unchecked") and not counts[key]) or (
                key.startswith("checked_") and not counts[key]):
            continue
        style = "red" if key in ("parse_failed", "gate_failed", "errors") and counts[key] \
            else ""
        table.add_row(label, f"[{style}]{counts[key]}[/{style}]" if style else str(counts[key]))
    err.print(table)


def _write_report(path: str, summary: Any) -> None:
    from klc.htmlreport import write_batch_report

    write_batch_report(path, summary)
