"""Benchmark `klc list` with the whole rule library over a folder of kernel files.

Prints files/s for klc's full listing (match + context + guards with tree-sitter facts only,
as `klc list --tree-only`; in one process, and with worker processes as `klc list -j N`), the
plain anchor matching alone, and ast-grep (``ast-grep-cli`` from PyPI, C++ language) running
the same anchors over the same files, as ratios measured in one run.

    python bench/list_bench.py DIR            # e.g. a corpus from bench/make_corpus.py
    python bench/list_bench.py DIR --rules passes --rules skills -j 2
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from klc.frontend import parse_bytes  # noqa: E402
from klc.library import load_rule_paths  # noqa: E402
from klc.match import find_matches, index_nodes  # noqa: E402
from klc.pipeline import find_sites, pattern_of  # noqa: E402


def sources(folder: Path) -> list[tuple[str, bytes]]:
    files = sorted(p for p in folder.rglob("*") if p.suffix in (".cu", ".cuh") and p.is_file())
    return [(str(p), p.read_bytes()) for p in files]


def time_klc_list(files: list[tuple[str, bytes]], rules: list) -> tuple[float, int]:  # type: ignore[type-arg]
    t0 = time.perf_counter()
    n = 0
    for path, data in files:
        n += sum(1 for s in find_sites(parse_bytes(data, path), rules, clang=False) if s.ok)
    return time.perf_counter() - t0, n


def time_plain_match(files: list[tuple[str, bytes]], rules: list) -> tuple[float, int]:  # type: ignore[type-arg]
    patterns = [pattern_of(r) for r in rules]
    types = {p.root_type for p in patterns}
    t0 = time.perf_counter()
    n = 0
    for path, data in files:
        unit = parse_bytes(data, path)
        cands = index_nodes(unit, types)
        for p in patterns:
            n += sum(1 for _ in find_matches(p, unit, None, cands))
    return time.perf_counter() - t0, n


def time_klc_list_jobs(folder: Path, rule_paths: list[str], jobs: int) -> tuple[float, int]:
    """`klc list DIR -j N --tree-only` through its Python API (klc.listing), files read by
    the workers."""
    from klc.listing import kernel_files, list_paths

    paths, _ = kernel_files([str(folder)])
    t0 = time.perf_counter()
    n = sum(sum(1 for s in lst.sites if s["applicable"])
            for lst in list_paths(paths, rule_paths, tree_only=True, jobs=jobs))
    return time.perf_counter() - t0, n


def time_ast_grep(folder: Path, rules: list,  # type: ignore[type-arg]
                  threads: int) -> tuple[float, int] | None:
    """ast-grep over the same files with the same anchors as patterns (C++ grammar; .cu and
    .cuh mapped to it through sgconfig's languageGlobs, which ast-grep needs to see them)."""
    # next to this Python first (a venv's bin/ need not be on PATH); never a bare `sg`, which
    # on many systems is util-linux's "execute as another group", not ast-grep
    local = Path(sys.executable).parent / "ast-grep"
    exe = str(local) if local.exists() else shutil.which("ast-grep")
    if exe is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "sgconfig.yml"
        (Path(tmp) / "rules").mkdir()
        cfg.write_text('ruleDirs: [rules]\nlanguageGlobs:\n  cpp: ["*.cu", "*.cuh"]\n')
        for r in rules:
            doc = {"id": r.name, "language": "cpp", "severity": "info",
                   "rule": {"pattern": r.anchor}}
            (Path(tmp) / "rules" / f"{r.name}.yml").write_text(json.dumps(doc))
        cmd = [exe, "scan", "-c", str(cfg), "--json=stream", "--threads", str(threads),
               str(folder.resolve())]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        print(f"ast-grep failed: {proc.stderr.strip()[:300]}", file=sys.stderr)
        return None
    hits = sum(1 for line in proc.stdout.splitlines() if line.strip())
    return elapsed, hits


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--rules", action="append", default=None)
    ap.add_argument("-j", "--jobs", type=int, default=2,
                    help="also time klc list with this many worker processes (default 2)")
    args = ap.parse_args()
    rule_paths = args.rules or [str(ROOT / "skills")]
    rules = load_rule_paths(rule_paths)
    gc.freeze()  # as the klc command does (klc.listing.tune_gc)
    gc.set_threshold(50_000, 20, 100)
    files = sources(args.dir)
    if not files:
        print(f"{args.dir}: no .cu/.cuh files", file=sys.stderr)
        return 2
    mb = sum(len(d) for _, d in files) / 1e6
    for path, data in files[:20]:  # warm caches: compiled patterns and queries
        find_sites(parse_bytes(data, path), rules, clang=False)
    t_list, n_list = time_klc_list(files, rules)
    t_plain, n_plain = time_plain_match(files, rules)
    t_jobs, n_jobs = time_klc_list_jobs(args.dir, rule_paths, args.jobs)
    sg = time_ast_grep(args.dir, rules, 1)  # one thread, like the one klc process here
    sg_all = time_ast_grep(args.dir, rules, 0)
    print(f"files: {len(files)}  MB: {mb:.1f}  rules: {len(rules)}")
    print(f"{'what':<34}{'seconds':>9}{'files/s':>10}{'matches':>9}")
    print(f"{'klc list (match+context+guards)':<34}{t_list:>9.2f}{len(files) / t_list:>10.0f}"
          f"{n_list:>9}")
    print(f"{f'klc list -j {args.jobs}':<34}{t_jobs:>9.2f}{len(files) / t_jobs:>10.0f}"
          f"{n_jobs:>9}")
    print(f"{'klc plain anchor matching':<34}{t_plain:>9.2f}{len(files) / t_plain:>10.0f}"
          f"{n_plain:>9}")
    if sg is None:
        print("ast-grep: not run (not installed, or it refused an anchor as a C++ pattern)")
    else:
        t_sg, n_sg = sg
        print(f"{'ast-grep scan -j1 (same anchors)':<34}{t_sg:>9.2f}{len(files) / t_sg:>10.0f}"
              f"{n_sg:>9}")
        if sg_all is not None:
            print(f"{'ast-grep scan (its default threads)':<34}{sg_all[0]:>9.2f}"
                  f"{len(files) / sg_all[0]:>10.0f}{sg_all[1]:>9}")
        print(f"ratio (one thread each) klc plain matching / ast-grep: {t_plain / t_sg:.2f}x   "
              f"klc list / ast-grep: {t_list / t_sg:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
