"""``klc optimize KERNEL``: apply skills forward under the gate (``klc.optimize``).

Exit status: 0 the kernel was improved and verified (and written where asked; with
``--unverified`` on a machine without a GPU: a candidate was written), 1 nothing improved
(or nothing could be verified), 2 an error (bad kernel, bad option, the original failing its
own gate).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from klc.errors import KlcError

REPORT_SUFFIXES = (".json", ".md", ".html")
MAX_LLM_TIMEOUT_S = 86400.0  # one request: a day is a typo, not a setting
MAX_LLM_RETRIES = 100


def llm_timeout(text: str) -> float:
    """``--llm-timeout S``: seconds, a positive finite number (argparse: exit 2)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 < value <= MAX_LLM_TIMEOUT_S:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give the seconds one request to the LLM server may take, a number "
            f"above 0 and at most {MAX_LLM_TIMEOUT_S:g}")
    return value


def llm_retries(text: str) -> int:
    """``--llm-retries N``: a whole number from 0 to ``MAX_LLM_RETRIES`` (argparse: exit 2)."""
    try:
        value = int(text.strip(), 10)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_LLM_RETRIES:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give how many times a failed or refused LLM request is retried, a "
            f"whole number from 0 to {MAX_LLM_RETRIES}")
    return value


def add_llm_options(p: argparse.ArgumentParser, prefix: str = "") -> None:
    """The LLM filler's ``--llm-timeout`` and ``--llm-retries`` (``klc optimize`` and ``klc
    batch --optimize``)."""
    p.add_argument("--llm-timeout", type=llm_timeout, metavar="S",
                   help=f"{prefix}--filler llm: seconds one request to the server may take "
                   "(default 60)")
    p.add_argument("--llm-retries", type=llm_retries, metavar="N",
                   help=f"{prefix}--filler llm: retries of a failed request (timeout, "
                   "connection, HTTP 429/5xx) and re-asks after a refused answer (default 3)")


def check_llm_options(args: argparse.Namespace) -> None:
    """The LLM options apply to the LLM filler only."""
    for opt, value in (("--model", args.model), ("--llm-timeout", args.llm_timeout),
                       ("--llm-retries", args.llm_retries)):
        if value is not None and args.filler != "llm":
            raise KlcError(f"{opt} applies to --filler llm only")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "optimize", help="apply skills to a kernel, filling holes by search (or an LLM), each "
        "candidate gated against the original; exit 0 improved, 1 nothing improved, 2 error",
        description="Loop: list the applicable skills, rank them by headroom (far from the "
        "speed-of-light floor structural skills first, near it cheap ones only), fill their "
        "holes, gate each candidate against the original kernel, keep the best verified one; "
        "repeat until the speed-of-light target, the trial budget, or no skill is left. "
        "Without a GPU only the static part runs (nothing is verified or timed).")
    p.add_argument("kernel", metavar="KERNEL", help="a .cu file with a klc-spec block")
    p.add_argument("--skills", action="append", metavar="DIR",
                   help="skill folders or .rule files (default: the skills library)")
    p.add_argument("--filler", choices=("search", "llm"), default="search",
                   help="who fills holes: search (default, embedded) or llm (an "
                   "OpenAI-compatible server: OPENAI_BASE_URL, OPENAI_API_KEY)")
    p.add_argument("--model", metavar="NAME", help="the model name for --filler llm")
    add_llm_options(p)
    p.add_argument("--budget", type=int, default=30, metavar="N",
                   help="gate trials to spend (cache hits are free; default 30)")
    p.add_argument("--target-sol", type=float, default=0.9, metavar="F",
                   help="stop once the kernel reaches this fraction of the speed-of-light "
                   "floor (default 0.9)")
    p.add_argument("--arch", help="target arch, e.g. sm_90 (default: the device's)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("-o", "--output", metavar="OUT", help="write the optimized kernel here")
    out.add_argument("--in-place", action="store_true",
                     help="overwrite KERNEL (atomically) when it improved")
    p.add_argument("--report", metavar="FILE", help="write the report: FILE.json, FILE.md "
                   "(with FILE.png, the plot of time and %% of SOL per step, where klc-cuda[plot] "
                   "is installed) or FILE.html (a page with the plot and every step's diff)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--unverified", action="store_true",
                   help="without a GPU, write the first compile-clean candidate anyway (it is "
                   "not verified; the report says so)")
    p.add_argument("--no-cache", action="store_true",
                   help="run every gate trial, even those recorded in the gate cache")
    p.add_argument("--seed", type=int, default=0, help="seed of the search's sampler")
    p.add_argument("--include-slower", action="store_true",
                   help="also try the skills whose card's verdict is 'slower' (measured "
                   "slower wherever measured; by default they are skipped, with a note)")


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse unusable output paths before any trial is spent."""
    if args.report and Path(args.report).suffix.lower() not in REPORT_SUFFIXES:
        raise KlcError(f"--report {args.report}: give a .json, .md or .html file")
    for opt, target in (("--report", args.report), ("-o", args.output)):
        if target:
            folder = Path(target).parent
            if not folder.is_dir():
                raise KlcError(f"{opt} {target}: folder {folder} does not exist")
            if Path(target).is_dir():
                raise KlcError(f"{opt} {target}: is a directory")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from klc.cuda.parse import read_source
    from klc.fsutil import atomic_write
    from klc.optimize import OptimizeOptions, optimize
    from klc.rule import RuleSet, default_skill_dirs

    if args.budget < 1:
        raise KlcError(f"--budget {args.budget}: give at least 1 gate trial")
    if not 0 < args.target_sol <= 1:
        raise KlcError(f"--target-sol {args.target_sol}: give a fraction in (0, 1]")
    check_llm_options(args)
    _check_outputs(args)
    source = read_source(args.kernel)
    rules = list(RuleSet.load(args.skills or default_skill_dirs()).rules)
    err = Console(stderr=True, emoji=False)
    with _Progress(err, args.kernel) as bar:
        result = optimize(source, args.kernel, OptimizeOptions(
            skills=rules, filler=args.filler, model=args.model, budget=args.budget,
            target_sol=args.target_sol, arch=args.arch, progress=bar.update,
            use_cache=not args.no_cache, unverified=args.unverified, seed=args.seed,
            include_slower=args.include_slower, llm_timeout_s=args.llm_timeout,
            llm_retries=args.llm_retries))
    data = result.to_json()
    if args.report:
        from klc.htmlreport import write_optimize_report

        write_optimize_report(args.report, result)
    written = ""
    if result.changed:
        if args.in_place:
            atomic_write(args.kernel, result.source, in_place=True)
            written = args.kernel
        elif args.output:
            atomic_write(args.output, result.source)
            written = args.output
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        _print_report(result, Console(emoji=False), written)
        if result.changed and not written:
            _print_diff(args.kernel, result.original, result.source)
    return 0 if result.changed else 1


class _Progress:
    """A rich progress bar over the trial budget, fed by the optimizer's events."""

    def __init__(self, console: Any, kernel: str) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.progress = Progress(TextColumn("[bold]{task.fields[kernel]}"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn("{task.description}"),
                                 console=console, transient=True,
                                 disable=not console.is_terminal)
        self.kernel = kernel
        self.task: Any = None

    def __enter__(self) -> _Progress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)  # type: ignore[arg-type]

    def update(self, event: str, data: dict[str, Any]) -> None:
        from rich.markup import escape

        if self.task is None:
            self.task = self.progress.add_task("starting", total=data.get("budget") or None,
                                               kernel=escape(self.kernel))
        text = {
            "start": "gating the original",
            "round": f"round {data.get('round')}",
            "trial-start": f"{data.get('skill')} {_values(data.get('values'))}",
            "trial": f"{data.get('skill')}: {data.get('verdict')}"
                     + (" (cached)" if data.get("cached") else ""),
            "refused": f"{data.get('skill')}: refused statically",
            "accept": f"kept {data.get('skill')}",
            "reverify": "independent re-verification",
            "done": "done",
        }.get(event, event)
        self.progress.update(self.task, completed=data.get("used", 0),
                             description=escape(text))


def _values(values: dict[str, str] | None) -> str:
    return " ".join(f"?{k}={v}" for k, v in (values or {}).items())


def _print_report(result: Any, out: Any, written: str) -> None:
    from rich.markup import escape
    from rich.table import Table

    r = result
    if r.mode == "static":
        out.print(f"[bold]{escape(r.path)}[/bold]: [yellow]static only[/yellow] "
                  "(nothing verified or timed)")
    elif r.changed:
        out.print(f"[bold]{escape(r.path)}[/bold]: [green]improved, verified[/green] "
                  f"{r.speedup:.2f}x the original, "
                  + (f"{r.pct_of_sol:.0f}% of SOL" if r.pct_of_sol is not None else ""))
    else:
        out.print(f"[bold]{escape(r.path)}[/bold]: [yellow]not changed[/yellow]")
    out.print(escape(f"  stopped: {r.stop_reason}"))
    out.print(escape(f"  gate trials {r.trials_used}/{r.budget}, cache hits {r.cache_hits}, "
                     f"filler {r.filler}: " + ", ".join(f"{k} {v}" for k, v in r.usage.items()
                                                         if k != "filler")))
    if r.baseline:
        b = r.baseline
        out.print(escape(f"  original: {b.get('median_ms', 0):.4f} ms, "
                         f"{b.get('pct_of_sol') or 0:.0f}% of SOL"))
    if r.steps:
        t = Table(box=None, header_style="bold", pad_edge=False)
        for col in ("#", "skill", "site", "holes", "kind", "time ms", "vs prev", "vs orig",
                    "% SOL"):
            t.add_column(col)
        for i, s in enumerate(r.steps, 1):
            t.add_row(str(i), escape(s.skill), escape(s.site), escape(_values(s.values)),
                      s.kind, f"{s.median_ms:.4f}" if s.median_ms else "-",
                      f"{s.speedup_vs_previous:.3f}x" if s.speedup_vs_previous else "-",
                      f"{s.speedup_vs_original:.3f}x" if s.speedup_vs_original else "-",
                      f"{s.pct_of_sol:.0f}" if s.pct_of_sol is not None else "-")
        out.print(t)
    if r.final:
        f = r.final
        out.print(escape(f"  re-verification (fresh seeds): {f['verdict']}"
                         + (f", {f['speedup']:.3f}x the original" if f.get("speedup") else "")))
    for c in r.static_candidates:
        out.print(escape(f"  candidate {c['skill']} at {c['site']} {_values(c['values'])}: "
                         "compile-clean, not verified"))
    for n in r.notes:
        out.print(escape(f"  note: {n}"))
    if written:
        out.print(escape(f"  wrote {written}"))


def _print_diff(path: str, old: bytes, new: bytes) -> None:
    from klc.content import unified_diff

    sys.stdout.write(unified_diff(old, new, path))
