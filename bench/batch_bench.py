"""Benchmark ``klc batch``: files/s over a folder of kernel files at -j1 and -j2, no gate.

    python bench/make_corpus.py /tmp/corpus -n 1000
    python bench/batch_bench.py /tmp/corpus                 # skills library, --out to a temp dir
    python bench/batch_bench.py /tmp/corpus --tree-only --append   # guards without libclang

Each run is a whole batch through the Python API (``klc.batch.run_batch``): the walk,
starting the worker processes, parsing and rewriting every file, the atomic writes of the
mirror tree and the fsync'd journal. The runs alternate between -j1 and -j2 (so that load
from anything else on the machine falls on both alike), ``--repeat`` times each; the median
is reported. For scale, the same work done by a plain loop in one process (read, parse,
apply the rules; no batch machinery, no writes) is timed too: -j1 against it is the batch's
own overhead. Figures are printed and written to bench/results/batch_bench.txt.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.make_corpus import corpus_how  # noqa: E402
from klc.batch import BatchConfig, BatchOptions, run_batch  # noqa: E402
from klc.errors import KlcError  # noqa: E402


def time_batch(config: BatchConfig, corpus: Path, jobs: int, mode: str) -> tuple[float, dict]:
    out = Path(tempfile.mkdtemp(prefix=f"klc-bench-j{jobs}-"))
    shutil.rmtree(out)
    try:
        t0 = time.perf_counter()
        summary = run_batch(config, BatchOptions([str(corpus)], mode=mode,
                                                 out_dir=str(out) if mode == "out" else None,
                                                 jobs=jobs))
        elapsed = time.perf_counter() - t0
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return elapsed, summary.counts()


def time_plain_loop(config: BatchConfig, corpus: Path) -> float:
    """The work alone: read, parse, apply; one process, nothing written."""
    from klc.cuda.parse import parse_bytes
    from klc.pipeline import apply_rules, spec_of

    rules = config.load_rules()
    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".cu", ".cuh"))
    t0 = time.perf_counter()
    for p in files:
        unit = parse_bytes(p.read_bytes(), str(p))
        if not unit.problems:
            with contextlib.suppress(KlcError):  # a refused rewrite costs what it cost
                apply_rules(unit, rules, None, spec_of(unit), clang=not config.tree_only)
    return time.perf_counter() - t0


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                              capture_output=True, check=False).stdout.strip() or "?"
    except OSError:
        return "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path, help="folder of kernel files (bench/make_corpus.py)")
    ap.add_argument("--rules", action="append", help="rule files or folders (default: skills)")
    ap.add_argument("--mode", choices=("out", "check"), default="out",
                    help="out: write a mirror tree and the journal (default); check: no writes")
    ap.add_argument("--repeat", type=int, default=3, help="runs per -j (median reported)")
    ap.add_argument("--no-plain", action="store_true", help="skip the plain-loop reference")
    ap.add_argument("--tree-only", action="store_true",
                    help="guards on tree-sitter facts only (klc batch --tree-only)")
    ap.add_argument("--append", action="store_true",
                    help="add the figures to the results file instead of replacing it")
    ap.add_argument("--save", type=Path, default=ROOT / "bench" / "results" / "batch_bench.txt")
    args = ap.parse_args()
    if not args.corpus.is_dir():
        print(f"{args.corpus}: no such folder (make one: python bench/make_corpus.py "
              f"{args.corpus} -n 1000)", file=sys.stderr)
        return 2
    gc.freeze()  # as the klc command does for its own process (klc.interrupts.tune_gc); the
    gc.set_threshold(50_000, 20, 100)  # batch's worker processes do the same
    rules = args.rules or ["skills"]
    config = BatchConfig.from_paths([r if Path(r).exists() else str(ROOT / r) for r in rules],
                                    tree_only=args.tree_only)
    n_files = sum(1 for p in args.corpus.rglob("*") if p.suffix in (".cu", ".cuh"))
    mb = sum(p.stat().st_size for p in args.corpus.rglob("*") if p.is_file()) / 1e6

    times: dict[int, list[float]] = {1: [], 2: []}
    plains: list[float] = []
    counts: dict[int, dict] = {}
    for _ in range(args.repeat):
        for jobs in (1, 2):
            elapsed, counts[jobs] = time_batch(config, args.corpus, jobs, args.mode)
            times[jobs].append(elapsed)
            print(f"  -j{jobs}: {elapsed:.2f} s", file=sys.stderr)
        if not args.no_plain:
            plains.append(time_plain_loop(config, args.corpus))
            print(f"  plain loop: {plains[-1]:.2f} s", file=sys.stderr)
    if counts[1] != counts[2]:
        print(f"results differ between -j1 and -j2: {counts[1]} vs {counts[2]}",
              file=sys.stderr)
        return 1
    t1, t2 = statistics.median(times[1]), statistics.median(times[2])
    plain = statistics.median(plains) if plains else None
    c = counts[1]
    lines = [
        f"# python bench/batch_bench.py {args.corpus} --mode {args.mode}"
        f"{' --tree-only' if args.tree_only else ''}   (corpus: {corpus_how(args.corpus)}"
        f"; rules: {', '.join(rules)} "
        f"({len(config.load_rules())} rules){'; --tree-only' if args.tree_only else ''}; "
        "no gate; "
        f"klc {commit()}; {platform.machine()} with {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; median of {args.repeat} runs each, -j1, -j2 and the "
        "plain loop alternating; each batch run a whole batch: walk, worker start, parse, rewrite, "
        + ("atomic writes of the mirror tree and the fsync'd journal)" if args.mode == "out"
           else "nothing written)"),
        f"files: {n_files}  MB: {mb:.1f}  rewritten: {c['rewritten']}  sites rewritten: "
        f"{c['sites_rewritten']}  refused by a guard: {c['sites_refused_by_guard']}",
        f"{'what (median of the runs; best)':<40} {'seconds':>8} {'files/s':>8} "
        f"{'best f/s':>8}",
        f"{'klc batch -j1':<40} {t1:>8.2f} {n_files / t1:>8.0f} {n_files / min(times[1]):>8.0f}",
        f"{'klc batch -j2':<40} {t2:>8.2f} {n_files / t2:>8.0f} {n_files / min(times[2]):>8.0f}",
    ]
    if plain is not None:
        lines.append(f"{'plain loop, one process, no writes':<40} {plain:>8.2f} "
                     f"{n_files / plain:>8.0f} {n_files / min(plains):>8.0f}")
    lines.append(f"speedup -j2/-j1: {t1 / t2:.2f}x" + (
        f"   batch -j1 overhead over the plain loop: {(t1 / plain - 1) * 100:+.0f}%"
        if plain is not None else ""))
    lines.append(f"runs -j1: {', '.join(f'{t:.2f}' for t in times[1])}   runs -j2: "
                 f"{', '.join(f'{t:.2f}' for t in times[2])}"
                 + (f"   plain: {', '.join(f'{t:.2f}' for t in plains)}" if plains else ""))
    text = "\n".join(lines) + "\n"
    print(text, end="")
    args.save.parent.mkdir(parents=True, exist_ok=True)
    if args.append and args.save.exists():
        text = args.save.read_text() + "\n" + text
    args.save.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
