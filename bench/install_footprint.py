"""What an install of klc costs: the size of a fresh virtual environment with it, and how long
``klc --help`` takes to start (a new interpreter each time), for each install spec given.

    python bench/install_footprint.py [--rev REV] [--baseline REV] [--runs N] [SPEC ...]

SPEC is an extras list as pip writes it: ``""`` (the core install, ``pip install klc-cuda``),
``"[ray]"``, ``"[test,ray,plot,tune]"``; default: the core install and every extra. The
revision REV (default: the working tree's HEAD) is cloned into a folder under /tmp, and each
SPEC gets a fresh virtual environment there (``pip install 'CLONE[extras]'``, not editable,
so klc itself is counted); ``--baseline REV`` adds the core install of another revision (the
one before a change), in its own clone. Printed per install: installed MB (``du`` of the
environment's site-packages), the packages installed, and the first and median wall time of
``klc --help`` over N runs. The first run follows the install; the other runs go round the
installs in turn (one run of each, N - 1 times), so that a busy moment of the shared machine
weighs on all of them alike: the medians are the figures to compare.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _du_mb(path: Path) -> float:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                total += os.lstat(p).st_blocks * 512
    return total / 1e6


def install(clone: Path, spec: str, env_dir: Path) -> dict[str, object]:
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    pip = env_dir / "bin" / "pip"
    subprocess.run([str(pip), "install", "-q", f"{clone}{spec}"], check=True)
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    frozen = subprocess.run([str(pip), "freeze"], check=True, capture_output=True,
                            text=True).stdout.split()
    return {"mb": _du_mb(site), "packages": len(frozen), "times": [_help(env_dir)],
            "has": sorted(p.split("==")[0].lower() for p in frozen
                          if p.split("==")[0].lower() in ("ray", "matplotlib", "optuna",
                                                          "openai"))}


def _help(env_dir: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run([str(env_dir / "bin" / "klc"), "--help"], check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def _clone(rev: str, where: Path) -> str:
    subprocess.run(["git", "clone", "-q", str(ROOT), str(where)], check=True)
    subprocess.run(["git", "-C", str(where), "checkout", "-q", rev], check=True)
    return subprocess.run(["git", "-C", str(where), "rev-parse", "--short", "HEAD"],
                          check=True, capture_output=True, text=True).stdout.strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="*", metavar="SPEC")
    ap.add_argument("--rev", default="HEAD", help="the revision to install (default HEAD)")
    ap.add_argument("--runs", type=int, default=7, help="klc --help runs per install")
    ap.add_argument("--baseline", metavar="REV", help="also the core install of REV")
    args = ap.parse_args()
    specs = args.specs or ["", "[ray]", "[plot]", "[tune]", "[llm]"]
    base = Path(tempfile.mkdtemp(prefix="klc-footprint-"))
    try:
        rev = _clone(args.rev, base / "klc")
        jobs = [(f"{rev} {spec or '(core)'}", base / "klc", spec) for spec in specs]
        if args.baseline:
            old = _clone(args.baseline, base / "baseline")
            jobs.insert(0, (f"{old} (core)", base / "baseline", ""))
        print(f"Python {sys.version.split()[0]}, {args.runs} runs of klc --help per install")
        done = []
        for i, (label, clone, spec) in enumerate(jobs):
            m = install(clone, spec, base / f"venv{i}")
            done.append((label, base / f"venv{i}", m))
        for _ in range(args.runs - 1):  # round robin: one run of each install in turn
            for _label, env_dir, m in done:
                m["times"].append(_help(env_dir))  # type: ignore[union-attr]
        print(f"{'install':<28} {'MB':>8} {'pkgs':>5} {'first s':>8} {'median s':>9}  "
              "optional packages present")
        for label, _env, m in done:
            times = m["times"]
            print(f"{label:<28} {m['mb']:>8.0f} {m['packages']:>5} {times[0]:>8.2f} "
                  f"{statistics.median(times):>9.2f}  {', '.join(m['has']) or '-'}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
