"""``klc lineage``: walk an expert kernel backward through gated simplifications.

    klc lineage EXPERT [--passes DIR] [--out DIR] [--json] [--stages S] [--arch sm_90]
    klc lineage --report DIR

Exit 0: the walk is written (at least one step); 1: no simplification applied to the
expert (the folder is still written: the expert and why); 2: bad input, nothing written.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("lineage", help="walk an expert kernel backward through gated "
                       "simplifications (passes/), recording every version, its gate record "
                       "and time, and every refused candidate")
    p.add_argument("expert", nargs="?", metavar="EXPERT", help="the expert .cu file (with a "
                   "klc-spec block)")
    p.add_argument("--passes", action="append", metavar="DIR",
                   help="simplification rules, walked in the order of DIR/ORDER (default: "
                   "the passes klc ships); given again, another folder walked after the "
                   "first (--passes passes --passes passes/warp_sums)")
    p.add_argument("--out", metavar="DIR", help="output folder (default: "
                   "lineage-<family>): lineage.json, v00_expert.cu, v01_<pass>.cu, ..., "
                   "report.md, lineage.png")
    p.add_argument("--stages", default="compile,verify,profile",
                   help="gate stages (default compile,verify,profile; without a GPU the walk "
                   "gates by compile only and says so)")
    p.add_argument("--arch", help="NVRTC target, e.g. sm_90 (default: the device's)")
    p.add_argument("--max-steps", type=int, default=200, metavar="N",
                   help="stop after N steps (default 200)")
    p.add_argument("--json", action="store_true", help="print lineage.json on stdout")
    p.add_argument("--force", action="store_true", help="replace a walk in --out that was "
                   "measured on a GPU even when this run cannot measure (default: refused)")
    p.add_argument("--explain", action="store_true", help="say, at the version where the walk "
                   "stops, which optimization constructs are left and why no pass takes each "
                   "apart (the first is where it stops)")
    p.add_argument("--report", metavar="DIR", help="only redraw DIR/report.md and "
                   "DIR/lineage.png from DIR/lineage.json (where matplotlib is installed)")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from klc.errors import KlcError
    from klc.lineage import check_replace, load_lineage, walk, write_lineage, write_report

    err = Console(stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True)
    if args.report:
        if args.expert:
            raise KlcError("--report DIR redraws an existing walk: give no EXPERT with it")
        data = load_lineage(args.report)
        for p in write_report(data, Path(args.report)):
            err.print(f"wrote {p}")
        from klc.extras import available, missing

        if not available("matplotlib"):
            err.print(f"klc: note: {missing('matplotlib', 'the plot (lineage.png)')}")
        return 0
    if not args.expert:
        raise KlcError("klc lineage: give the EXPERT kernel file (or --report DIR)")
    if args.max_steps < 1:
        raise KlcError("--max-steps must be at least 1")
    stages = tuple(s.strip() for s in args.stages.split(",") if s.strip())
    if args.out:  # (before the walk: a refusal costs nothing)
        check_replace(args.out, stages, args.force)
    lineage = walk(args.expert, args.passes or None, stages=stages, arch=args.arch,
                   progress=err.print, max_steps=args.max_steps)
    out = Path(args.out or f"lineage-{lineage.family}")
    check_replace(out, stages, args.force)
    written = write_lineage(lineage, out)
    data = lineage.to_json()
    if args.json:
        sys.stdout.write(json.dumps(data, indent=1) + "\n")
    else:
        _table(data)
        err.print(f"wrote {len(written)} files to {out}/ ({lineage.gating} gating)")
    if args.explain:
        _explain(data, out)
    return 0 if len(lineage.versions) > 1 else 1


def _explain(data: dict, out: Path) -> None:  # type: ignore[type-arg]
    last = out / data["versions"][-1]["file"]
    stops = data.get("stop_constructs") or []
    if not stops:
        print(f"{last}: no optimization construct klc knows is left: the walk reached a "
              "naive kernel")
        return
    print(f"{last}: the walk stops at {stops[0]['construct']}; constructs left, outermost "
          "first:")
    for s in stops:
        print(f"  {last}:{s['line']}:{s['col']}: {s['construct']} (`{s['text']}`): "
              f"{s['verdict']}")


def _table(data: dict) -> None:  # type: ignore[type-arg]
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{data['family']}: naive -> expert ({data['gating']} gating, "
                  f"{data.get('device') or 'no GPU'})")
    for col in ("version", "pass", "gate", "median us", "% SOL"):
        table.add_column(col, justify="right" if col in ("median us", "% SOL") else "left")
    for v in reversed(data["versions"]):
        ms, pct = v.get("median_ms"), v.get("pct_of_sol")
        table.add_row(v["file"], v.get("pass") or "(expert)", str(v.get("verdict")),
                      f"{ms * 1e3:.1f}" if ms else "-", f"{pct:.0f}" if pct is not None else "-")
    Console(highlight=False, emoji=False).print(table)
    print(f"stopped: {data.get('stop_reason')}")
