"""How good is ``klc optimize``? One table over the lineages' naive kernels and the held-out set.

For each lineage in bench/lineages/<family>/, the naive end (the last version of its walk,
walk/vNN_<pass>.cu sorted by name: the expert with every simplification applied) is
optimized with a fixed budget of gate trials, then the result is gated against the family's
expert.cu: verify against the expert, and the expert timed in the same process as klc's
kernel, so "% of expert" is one measured ratio. Each held-out kernel in bench/heldout/*.cu
(never walked backward, so no skill was learned from it) is optimized the same way; there is
no expert to compare with.

Columns: kernel, naive time, klc time, expert time, % of expert speed (lineages), % of SOL
(klc's kernel), speedup over naive (from the independent re-verification: naive timed in the
same process), budget trials spent until a verified candidate reached 95% of the final
speedup, verified (the independent re-verification with fresh seeds passed).

A kernel that fails (bad spec, the original failing its own gate, any exception) gets a row
with its error and the table goes on. Each run uses a fresh gate cache (so the trial counts
are real) unless --cache DIR names one to reuse.

Holes are filled by the search filler (the default) or, with ``--filler llm``, by an
OpenAI-compatible server (``OPENAI_BASE_URL``, ``--model`` or ``KLC_LLM_MODEL``; its request
timeout and retries with ``--llm-timeout S`` and ``--llm-retries N``, as ``klc optimize``
takes them); each row keeps the filler's spend (requests, cache hits, tokens).

    python bench/quality.py [--out DIR] [--budget 30] [--family softmax] [--kernel 'rms*']
                            [--transfer] [--spellings] [--no-lineages] [--no-heldout]
                            [--lineages DIR]
                            [--filler search|llm] [--model NAME]
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from klc.commands.optimize import add_llm_options, check_llm_options  # noqa: E402
from klc.errors import KlcError  # noqa: E402

TARGET_EXPERT = 0.9  # each lineage's naive kernel reaches >= 90% of its expert
TARGET_GEOMEAN = 1.5  # held-out geomean speedup >= 1.5x
TRANSFER_GEOMEAN = 2.0  # transfer set geomean >= 2x over the first versions
FAR_PCT, FAR_SPEEDUP = 30.0, 3.0  # each kernel under 30% of SOL at least 3x faster


def lineage_jobs(families: list[str] | None, root: Path = ROOT / "bench/lineages"
                 ) -> list[dict[str, Any]]:
    """The naive end of each walk under ``root`` (FAMILY/expert.cu and FAMILY/walk/):
    bench/lineages, or the third-party experts' walks that bench/experts/walk.py keeps in
    the cache."""
    jobs = []
    for fam in sorted(p for p in root.iterdir() if p.is_dir()):
        steps = sorted(p for p in (fam / "walk").glob("v*.cu") if not p.name.startswith("v00_"))
        if not steps or not (fam / "expert.cu").exists():
            continue
        if families and fam.name not in families:
            continue
        jobs.append({"name": fam.name, "set": "lineage", "path": steps[-1],
                     "expert": fam / "expert.cu"})
    return jobs


def heldout_jobs(pattern: str | None, which: str = "heldout") -> list[dict[str, Any]]:
    """The kernels of bench/heldout/ (the regression set), bench/transfer/ (the blind set)
    or bench/spellings/ (first versions in the spellings public code has), whose names
    match ``pattern``."""
    folder = ROOT / "bench" / which
    paths = sorted(folder.glob("*.cu")) if folder.is_dir() else []
    globs = pattern.split(",") if pattern else None
    return [{"name": p.stem, "set": which, "path": p, "expert": None} for p in paths
            if globs is None or any(fnmatch.fnmatch(p.stem, g) for g in globs)]


def rel(p: Path) -> str:
    try:
        return str(p.relative_to(ROOT))
    except ValueError:
        return str(p)


def run_one(job: dict[str, Any], args: argparse.Namespace, cache: str,
            skills: list[Any] | None) -> dict[str, Any]:
    from klc.cuda.parse import read_source
    from klc.gate import gate
    from klc.optimize import OptimizeOptions, optimize, summarize

    path = rel(job["path"])
    row: dict[str, Any] = {"kernel": job["name"], "set": job["set"], "path": path}
    t0 = time.perf_counter()
    try:
        source = read_source(job["path"])
        result = optimize(source, path, OptimizeOptions(
            skills=skills, budget=args.budget, target_sol=args.target_sol, cache_dir=cache,
            seed=args.seed, filler=args.filler, model=args.model,
            llm_timeout_s=args.llm_timeout, llm_retries=args.llm_retries,
            rank_by_headroom=not args.no_headroom))
        base = result.baseline or {}
        final = result.final if result.changed else base
        row.update(
            mode=result.mode, changed=result.changed, verified=result.verified,
            naive_ms=base.get("median_ms"), klc_ms=(final or {}).get("median_ms"),
            pct_of_sol=result.pct_of_sol, naive_pct_of_sol=base.get("pct_of_sol"),
            speedup=(result.speedup if result.changed else 1.0) if result.mode == "gpu"
            else None,
            trials=result.trials_used, cache_hits=result.cache_hits,
            trials_to_95=result.trials_to_fraction(0.95),
            steps=[s.skill if s.kind == "recipe" else
                   f"{s.skill}({', '.join(f'{k}={v}' for k, v in s.values.items())})"
                   for s in result.steps],
            rejected_at_reverify=bool(result.steps) and result.final is not None
            and result.final.get("verdict") != "passed",
            stop_reason=result.stop_reason, notes=result.notes, filler=result.filler,
            usage=result.usage, report=result.to_json())
        if result.mode != "gpu":
            row["error"] = (f"static only, {len(result.static_candidates)} compile-clean "
                            f"candidate(s): {result.notes[0] if result.notes else ''}")
        elif job["expert"] is not None:
            expert = read_source(job["expert"])
            rec = gate(result.source, path, reference=expert,
                       reference_path=rel(job["expert"]))
            s = summarize(rec)
            row["vs_expert"] = s
            prof = rec.stages.get("profile")
            if rec.passed and prof is not None:
                ref = prof.data.get("series", {}).get("reference", {})
                row["expert_ms"] = ref.get("median_ms")
                row["pct_of_expert"] = 100 * (s.get("speedup") or 0)
            else:
                row["error"] = f"klc's kernel against the expert: {rec.reason}"
    except KlcError as e:
        row["error"] = str(e)
    except Exception as e:  # one kernel must not stop the table
        row["error"] = f"{type(e).__name__}: {e}"
        row["traceback"] = traceback.format_exc()
    row["wall_s"] = round(time.perf_counter() - t0, 1)
    return row


def _us(ms: float | None) -> str:
    return "-" if ms is None else f"{ms * 1e3:.1f}"


def _num(v: float | None, spec: str, suffix: str = "") -> str:
    return "-" if v is None else f"{v:{spec}}{suffix}"


COLUMNS = ("kernel", "naive us", "klc us", "expert us", "% expert", "% SOL before",
           "% SOL", "speedup", "trials", "to 95%", "verified")


def table_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
    out = []
    for r in rows:
        verified = "error" if r.get("error") else ("yes" if r.get("verified") else
                                                   "REJECTED" if r.get("rejected_at_reverify")
                                                   else "unchanged")
        out.append([r["kernel"], _us(r.get("naive_ms")), _us(r.get("klc_ms")),
                    _us(r.get("expert_ms")), _num(r.get("pct_of_expert"), ".0f", "%"),
                    _num(r.get("naive_pct_of_sol"), ".0f", "%"),
                    _num(r.get("pct_of_sol"), ".0f", "%"), _num(r.get("speedup"), ".2f", "x"),
                    str(r.get("trials", "-")), str(r.get("trials_to_95") or "-"), verified])
    return out


def _geomean(rows: list[dict[str, Any]]) -> float | None:
    return math.exp(sum(math.log(r["speedup"]) for r in rows) / len(rows)) if rows else None


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    lin = [r for r in rows if r["set"] == "lineage"]
    held = [r for r in rows if r["set"] == "heldout"]
    ok_held = [r for r in held if not r.get("error") and r.get("speedup")]
    geo = _geomean(ok_held)
    sp = [r for r in rows if r["set"] == "spellings" and not r.get("error") and r.get("speedup")]
    tr = [r for r in rows if r["set"] == "transfer"]
    ok_tr = [r for r in tr if not r.get("error") and r.get("speedup")]
    far = [r for r in ok_tr if (r.get("naive_pct_of_sol") or 100.0) < FAR_PCT]
    return {
        "transfer": len(tr), "transfer_measured": len(ok_tr),
        "transfer_geomean_speedup": _geomean(ok_tr),
        "transfer_far": len(far),
        "transfer_far_at_3x": sum(1 for r in far if r["speedup"] >= FAR_SPEEDUP),
        "transfer_far_short": [r["kernel"] for r in far if r["speedup"] < FAR_SPEEDUP],
        "lineages": len(lin),
        "lineages_at_90pct_of_expert": sum(1 for r in lin
                                           if (r.get("pct_of_expert") or 0) >= 90),
        "heldout": len(held), "heldout_measured": len(ok_held),
        "heldout_geomean_speedup": geo,
        "spellings": sum(1 for r in rows if r["set"] == "spellings"),
        "spellings_measured": len(sp), "spellings_geomean_speedup": _geomean(sp),
        "rejected_at_reverify": sum(1 for r in rows if r.get("rejected_at_reverify")),
        "errors": sum(1 for r in rows if r.get("error")),
        "trials": sum(r.get("trials") or 0 for r in rows),
    }


def markdown(rows: list[dict[str, Any]], summ: dict[str, Any], meta: dict[str, Any]) -> str:
    lines = [f"# klc optimize quality ({meta['device']}, budget {meta['budget']} gate trials "
             "per kernel)", "",
             f"Filler: {meta.get('filler', 'search')}; ranking: "
             f"{meta.get('ranking', 'by headroom')}; skills: {meta['skills']}; "
             f"klc {meta['version']}; {meta['date']}.", ""]
    for group, title in (("lineage", "Lineages (naive end -> klc, vs the expert)"),
                         ("heldout", "Regression set (bench/heldout)"),
                         ("transfer", "Transfer set (bench/transfer)"),
                         ("spellings", "Public spellings (bench/spellings)")):
        sub = [r for r in rows if r["set"] == group]
        if not sub:
            continue
        lines += [f"## {title}", "", "| " + " | ".join(COLUMNS) + " |",
                  "|" + "---|" * len(COLUMNS)]
        lines += ["| " + " | ".join(c) + " |" for c in table_rows(sub)]
        lines.append("")
    lines += ["## Summary", "",
              f"- lineages at >= 90% of the expert's speed: "
              f"{summ['lineages_at_90pct_of_expert']} of {summ['lineages']} (target: all)",
              f"- held-out geomean speedup: {_num(summ['heldout_geomean_speedup'], '.2f', 'x')} "
              f"over {summ['heldout_measured']} of {summ['heldout']} kernels "
              f"(target >= {TARGET_GEOMEAN}x)",
              *([f"- transfer geomean speedup: "
                 f"{_num(summ['transfer_geomean_speedup'], '.2f', 'x')} over "
                 f"{summ['transfer_measured']} of {summ['transfer']} kernels (target >= "
                 f"{TRANSFER_GEOMEAN}x)",
                 f"- transfer kernels under {FAR_PCT:.0f}% of SOL at least {FAR_SPEEDUP:.0f}x "
                 f"faster: {summ['transfer_far_at_3x']} of {summ['transfer_far']} (short: "
                 f"{', '.join(summ['transfer_far_short']) or 'none'})"]
                if summ["transfer"] else []),
              *([f"- public spellings geomean speedup: "
                 f"{_num(summ['spellings_geomean_speedup'], '.2f', 'x')} over "
                 f"{summ['spellings_measured']} of {summ['spellings']} kernels"]
                if summ.get("spellings") else []),
              f"- accepted kernels rejected by the independent re-verification: "
              f"{summ['rejected_at_reverify']} (target 0)",
              f"- errors: {summ['errors']}; gate trials in all: {summ['trials']}", ""]
    notes = [(r["kernel"], r["error"]) for r in rows if r.get("error")]
    if notes:
        lines += ["## Errors", ""] + [f"- {k}: {e.splitlines()[0][:300]}" for k, e in notes]
        lines.append("")
    lines += ["## Steps kept", ""]
    lines += [f"- {r['kernel']}: " + (" -> ".join(r.get("steps") or []) or "none")
              + f" ({r.get('stop_reason', '')})" for r in rows if not r.get("error")]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--out", type=Path, help="write results.json and results.md here")
    ap.add_argument("--budget", type=int, default=30)
    ap.add_argument("--target-sol", type=float, default=0.9)
    ap.add_argument("--family", action="append", help="only these lineages (repeatable)")
    ap.add_argument("--kernel", help="only held-out (and transfer) kernels whose name matches "
                    "one of these globs (comma-separated)")
    ap.add_argument("--no-lineages", action="store_true")
    ap.add_argument("--lineages", type=Path, default=ROOT / "bench/lineages", metavar="DIR",
                    help="the walks to take the naive ends of (FAMILY/expert.cu and "
                    "FAMILY/walk/ under DIR; default bench/lineages; the third-party experts' "
                    "walks: the experts/ folder of bench/experts/walk.py's output)")
    ap.add_argument("--no-heldout", action="store_true")
    ap.add_argument("--spellings", action="store_true",
                    help="also bench/spellings/ (--kernel filters it too)")
    ap.add_argument("--no-headroom", action="store_true",
                    help="rank skills without the headroom tiers (every skill at any %% of "
                    "SOL): to measure what the tiers cost or save")
    ap.add_argument("--transfer", action="store_true",
                    help="also the transfer set, bench/transfer/ (--kernel filters it too)")
    ap.add_argument("--skills", action="append", metavar="DIR",
                    help="skill folders (default: the skills library)")
    ap.add_argument("--cache", metavar="DIR", help="reuse this gate cache (default: fresh)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--filler", choices=("search", "llm"), default="search",
                    help="who fills holes (default search; llm: OPENAI_BASE_URL, --model)")
    ap.add_argument("--model", metavar="NAME", help="--filler llm: the model name")
    add_llm_options(ap)
    ap.add_argument("--combine", nargs="+", type=Path, metavar="RESULTS_JSON",
                    help="run nothing: merge the rows of earlier runs' results.json (split "
                    "over several device calls) into one table in --out")
    args = ap.parse_args()
    if args.combine:
        return combine(args.combine, args.out)
    try:
        check_llm_options(args)
        if args.filler == "llm":  # its configuration (server, model) once, before any kernel
            from klc.optimize import make_filler

            make_filler("llm", model=args.model, llm_timeout_s=args.llm_timeout,
                        llm_retries=args.llm_retries)
    except KlcError as e:
        print(f"quality.py: error: {e}", file=sys.stderr)
        return 2

    from rich.console import Console
    from rich.table import Table

    from klc import __version__, plugins
    from klc.gate.cache import device_name
    from klc.rule import RuleSet, default_skill_dirs

    plugins.load()
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
    skill_dirs = args.skills or default_skill_dirs()
    skills = list(RuleSet.load(skill_dirs).rules)
    if not args.no_lineages and not args.lineages.is_dir():
        print(f"quality: --lineages {args.lineages}: no such folder", file=sys.stderr)
        return 2
    jobs = ([] if args.no_lineages else lineage_jobs(args.family, args.lineages)) + \
        ([] if args.no_heldout else heldout_jobs(args.kernel)) + \
        (heldout_jobs(args.kernel, "transfer") if args.transfer else []) + \
        (heldout_jobs(args.kernel, "spellings") if args.spellings else [])
    console = Console() if sys.stdout.isatty() else Console(width=200)
    meta = {"device": device_name() or "no GPU", "budget": args.budget, "version": __version__,
            "filler": args.filler + (f" ({args.model})" if args.model else ""),
            "ranking": "no headroom tiers" if args.no_headroom else "by headroom",
            "skills": ", ".join(skill_dirs) + f" ({len(skills)} rules)",
            "date": time.strftime("%Y-%m-%d %H:%M")}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="klc-quality-") as tmp:
        cache = args.cache or tmp
        for i, job in enumerate(jobs, 1):
            row = run_one(job, args, cache, skills)
            rows.append(row)
            if args.out is not None:  # after every kernel: a run cut short keeps its rows
                write_results(args.out, rows, meta)
            head = f"[{i}/{len(jobs)}] {job['name']}: "
            if row.get("error"):
                console.print(head + "error: " + row["error"].splitlines()[0][:200],
                              markup=False)
            else:
                console.print(head + f"{_num(row.get('speedup'), '.2f', 'x')}, "
                              f"{row.get('trials')} trials, "
                              f"{'verified' if row.get('verified') else 'unchanged'} "
                              f"({row['wall_s']} s)", markup=False)
    summ = summary(rows)
    table = Table(title=f"klc optimize, budget {args.budget} ({meta['device']})")
    for c in COLUMNS:
        table.add_column(c, justify="left" if c == "kernel" else "right")
    for r in table_rows(rows):
        table.add_row(*r)
    console.print(table)
    console.print(markdown([], summ, meta).split("## Summary", 1)[1].split("## Steps")[0],
                  markup=False)
    if args.out is not None:
        write_results(args.out, rows, meta)
        console.print(f"wrote {args.out / 'results.json'} and {args.out / 'results.md'}",
                      markup=False)
    return 0


def write_results(out: Path, rows: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    from klc.fsutil import atomic_write

    summ = summary(rows)
    atomic_write(out / "results.json", json.dumps(
        {"meta": meta, "summary": summ, "rows": rows}, indent=1, default=str).encode())
    atomic_write(out / "results.md", markdown(rows, summ, meta).encode())


def combine(paths: list[Path], out: Path | None) -> int:
    """One table from several runs (the same device and budget, say the first run's meta)."""
    rows: list[dict[str, Any]] = []
    meta: dict[str, Any] = {}
    for p in paths:
        data = json.loads(p.read_text())
        meta = meta or dict(data["meta"])
        if data["meta"].get("device") != meta.get("device"):
            print(f"{p}: measured on {data['meta'].get('device')}, not {meta.get('device')}",
                  file=sys.stderr)
            return 2
        rows += data["rows"]
    meta["date"] += f" (combined from {len(paths)} runs)"
    if out is None:
        print(markdown(rows, summary(rows), meta))
        return 0
    out.mkdir(parents=True, exist_ok=True)
    write_results(out, rows, meta)
    print(f"wrote {out / 'results.json'} and {out / 'results.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
