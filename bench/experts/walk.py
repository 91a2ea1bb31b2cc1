"""Walk every expert of the frozen third-party set and say how far each walk got.

    python bench/experts/walk.py [--manifest bench/experts/manifest.yaml] [--only NAME ...]
        [--stages compile,verify,profile] [--passes passes] [--cache ~/.cache/klc]
        [--experts DIR] [-j N] [--markdown FILE] [--json FILE]

Materialises the experts (bench/experts/materialize.py) into CACHE/experts/NAME/expert.cu,
walks each with ``klc.lineage.walk`` (full gating where a GPU is, compile-only elsewhere) into
CACHE/experts/NAME/walk/, and prints per expert: the steps walked, the structural ones
(every pass but the qualifiers, launch bounds and unroll pragmas), the passes in walk order,
the construct where the walk stops and why (klc/explain.py), and, when timed, the expert's
and the naive end's median times. The done-when line counts the experts with at least
``--min-structural`` (default 2) structural steps. ``--experts DIR`` walks experts already
materialised (DIR/NAME/expert.cu, as on a machine without the corpus); ``-j N`` walks N at a
time (on a GPU the profiles then share the device: the times are noisier). The JSON is
rewritten after every walk, so a run cut short keeps what it walked.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import materialize  # noqa: E402  (the sibling script)

NOT_STRUCTURAL = frozenset({"remove_restrict", "remove_const_param", "remove_launch_bounds",
                            "remove_pragma_unroll", "remove_bare_pragma_unroll"})
# Structural steps that only respell a construct (the same instructions before and after):
# counted apart, so that the table also says how many steps changed the algorithm.
SPELLING = frozenset({"cg_tile_shfl_to_intrinsic", "cg_block_sync_to_syncthreads",
                      "cg_grid_rank_to_index", "shfl_width_32_to_default",
                      "index_shift_to_divide", "lane_mask_to_modulo",
                      "hoisted_grid_stride_to_inline", "unrolled_xor_sum_to_loop"})


def walk_one(path: Path, out: Path, passes: list[str], stages: tuple[str, ...]) -> dict:
    from klc import plugins
    from klc.errors import KlcError
    from klc.lineage import walk, write_lineage

    plugins.load()  # a worker process: the rule loader's kinds and predicates, once
    t0 = time.perf_counter()
    try:
        lineage = walk(path, passes, stages=stages)
    except KlcError as e:
        return {"name": path.parent.name, "error": " ".join(str(e).split())[:300]}
    write_lineage(lineage, out)
    row = summarize(path.parent.name, out)
    row["seconds"] = round(time.perf_counter() - t0, 1)
    return row


def summarize(name: str, walk_dir: Path) -> dict:
    """A walk's row: its steps, the structural ones, and where it stops (explained again
    from its last version, so that a recorded walk reads with the current catalogue)."""
    from klc.explain import explain_lineage, stop_construct
    from klc.lineage import load_lineage

    data = load_lineage(walk_dir)
    steps = [v["pass"] for v in data["versions"][1:]]
    structural = [s for s in steps if s not in NOT_STRUCTURAL]
    stop = stop_construct(explain_lineage(data, walk_dir))
    return {"name": name, "steps": len(steps), "structural": len(structural),
            "spelling": sum(1 for s in structural if s in SPELLING),
            "passes": steps, "gating": data["gating"], "device": data.get("device"),
            "stop": stop.construct if stop else "none (naive end)",
            "stop_where": f"{data['versions'][-1]['file']}:{stop.line}" if stop else "",
            "stop_text": stop.text if stop else "", "stop_verdict": stop.verdict if stop else "",
            "expert_ms": data["versions"][0].get("median_ms"),
            "naive_ms": data["versions"][-1].get("median_ms"),
            "stop_reason": data["stop_reason"], "seconds": 0.0}


def _compact(passes: list[str]) -> str:
    out: list[str] = []
    for p in passes:
        if out and out[-1].split(" x")[0] == p:
            n = int(out[-1].split(" x")[1]) + 1 if " x" in out[-1] else 2
            out[-1] = f"{p} x{n}"
        else:
            out.append(p)
    return ", ".join(out)


def markdown(rows: list[dict], min_structural: int, head: str) -> str:
    ok = sum(1 for r in rows if r.get("structural", 0) >= min_structural)
    strict = sum(1 for r in rows
                 if r.get("structural", 0) - r.get("spelling", 0) >= min_structural)
    lines = [head, "",
             f"**{ok} of {len(rows)}** experts walk at least {min_structural} structural steps "
             "(steps other than `__restrict__`/`const`, launch bounds and unroll pragmas); "
             f"{strict} of {len(rows)} when the steps that only respell a construct "
             "(cooperative groups to built-ins, shift to divide, a hoisted stride, the default "
             "shuffle width, an unrolled butterfly folded) are not counted.", "",
             "| expert | steps | structural | of which respelling | expert us | naive end us | "
             "stops at | why |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['name']} | - | - | - | - | - | error | {r['error']} |")
            continue
        ems = f"{r['expert_ms'] * 1e3:.1f}" if r.get("expert_ms") else "-"
        nms = f"{r['naive_ms'] * 1e3:.1f}" if r.get("naive_ms") else "-"
        lines.append(f"| {r['name']} | {r['steps']} | {r['structural']} | "
                     f"{r.get('spelling', 0)} | {ems} | {nms} | "
                     f"{r['stop']} (`{r['stop_text']}`) | {r['stop_verdict'][:160]} |")
    lines += ["", "Steps per expert, in walk order:", ""]
    lines += [f"- {r['name']}: {_compact(r.get('passes', [])) or '(none)'}" for r in rows
              if "error" not in r]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", type=Path, default=materialize.DEFAULT_MANIFEST)
    ap.add_argument("--corpus", type=Path, default=None)
    ap.add_argument("--cache", type=Path, default=None, help="default ~/.cache/klc")
    ap.add_argument("--only", nargs="+", default=None, metavar="NAME")
    ap.add_argument("--passes", action="append", default=None, metavar="DIR",
                    help="pass folders, walked in order (default: passes and "
                    "passes/warp_sums)")
    ap.add_argument("--stages", default="compile,verify,profile")
    ap.add_argument("--experts", type=Path, default=None,
                    help="walk the experts materialised in DIR (no corpus needed)")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--from-walks", type=Path, default=None, metavar="DIR",
                    help="walk nothing: read the walks recorded in DIR/NAME/walk (a GPU "
                    "machine's, say) and print and write their table")
    ap.add_argument("--min-structural", type=int, default=2)
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    cache = (args.cache or materialize.default_cache()).expanduser()
    corpus = (args.corpus or cache / "corpus").expanduser()
    try:
        experts = materialize.load_manifest(args.manifest)
        if args.only:
            bad = sorted(set(args.only) - {e.name for e in experts})
            if bad:
                raise materialize.ManifestError(f"{args.manifest}: no expert {bad[0]!r}")
            experts = [e for e in experts if e.name in args.only]
        if args.from_walks:
            paths = []
        elif args.experts:
            paths = [args.experts / e.name / "expert.cu" for e in experts]
            missing = [p for p in paths if not p.is_file()]
            if missing:
                raise materialize.ManifestError(f"{missing[0]}: not materialised")
        else:
            paths = materialize.materialize(experts, corpus, cache / "experts")
    except materialize.ManifestError as e:
        print(f"walk: {e}", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("walk: -j must be at least 1", file=sys.stderr)
        return 2
    stages = tuple(s.strip() for s in args.stages.split(",") if s.strip())
    if args.from_walks:
        from klc.errors import KlcError

        if not args.from_walks.is_dir():
            print(f"walk: {args.from_walks}: no such folder", file=sys.stderr)
            return 2

        rows = []
        for e in experts:
            try:
                rows.append(summarize(e.name, args.from_walks / e.name / "walk"))
            except KlcError as err:
                rows.append({"name": e.name, "error": " ".join(str(err).split())[:300]})
        return _finish(rows, args)
    root = HERE.parent.parent
    passes = args.passes or [str(root / "passes"), str(root / "passes" / "warp_sums")]
    rows: list[dict] = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(walk_one, p, p.parent / "walk", passes, stages)
                   for p in paths]
        for f in futures:
            r = f.result()
            rows.append(r)
            if "error" in r:
                print(f"{r['name']:28} ERROR {r['error']}", flush=True)
            else:
                print(f"{r['name']:28} {r['steps']:3} steps {r['structural']:3} structural  "
                      f"stops at {r['stop']} ({r['stop_where']}: {r['stop_text']})  "
                      f"[{r['seconds']} s]", flush=True)
            if args.json:
                args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return _finish(rows, args)


def _finish(rows: list[dict], args: argparse.Namespace) -> int:
    for r in rows:
        if args.from_walks and "error" not in r:
            print(f"{r['name']:28} {r['steps']:3} steps {r['structural']:3} structural  "
                  f"stops at {r['stop']} ({r['stop_where']}: {r['stop_text']})")
    ok = sum(1 for r in rows if r.get("structural", 0) >= args.min_structural)
    print(f"{ok} of {len(rows)} walk at least {args.min_structural} structural steps")
    device = next((r.get("device") for r in rows if r.get("device")), None)
    gating = next((r.get("gating") for r in rows if r.get("gating")), "?")
    head = (f"# Third-party experts: how far the walks get\n\n`python bench/experts/walk.py` "
            f"over bench/experts/manifest.yaml ({len(rows)} experts), gating {gating}, "
            f"device {device or 'none (NVRTC compile only)'}.")
    if args.markdown:
        args.markdown.write_text(markdown(rows, args.min_structural, head))
    if args.json and args.from_walks:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0

if __name__ == "__main__":
    sys.exit(main())
