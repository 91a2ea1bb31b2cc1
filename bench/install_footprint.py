"""What an install of klc costs: the size of a fresh virtual environment with it, and how long
``klc --help`` takes to start (a new interpreter each time), for each install spec given.

    python bench/install_footprint.py [--rev REV] [--runs N] [SPEC ...]

SPEC is an extras list as pip writes it: ``""`` (the core install, ``pip install klc``),
``"[ray]"``, ``"[test,ray,plot,tune]"``; default: the core install and every extra. The
revision REV (default: the working tree's HEAD) is cloned into a folder under /tmp, and each
SPEC gets a fresh virtual environment there (``pip install 'CLONE[extras]'``, not editable,
so klc itself is counted). Printed per SPEC: installed MB (``du`` of the environment's
site-packages), the packages installed, and the first and median wall time of
``klc --help`` over N runs (the first run follows the install; the machine is shared, so the
median is the figure to compare).
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


def measure(clone: Path, spec: str, runs: int, base: Path) -> dict[str, object]:
    env_dir = base / ("venv" + (spec.strip("[]").replace(",", "-") or "-core"))
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    pip = env_dir / "bin" / "pip"
    subprocess.run([str(pip), "install", "-q", f"{clone}{spec}"], check=True)
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    frozen = subprocess.run([str(pip), "freeze"], check=True, capture_output=True,
                            text=True).stdout.split()
    klc = env_dir / "bin" / "klc"
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([str(klc), "--help"], check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return {"spec": spec or "(core)", "mb": _du_mb(site), "packages": len(frozen),
            "has": sorted(p.split("==")[0].lower() for p in frozen
                          if p.split("==")[0].lower() in ("ray", "matplotlib", "optuna",
                                                          "openai")),
            "first_s": times[0], "median_s": statistics.median(times)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="*", metavar="SPEC")
    ap.add_argument("--rev", default="HEAD", help="the revision to install (default HEAD)")
    ap.add_argument("--runs", type=int, default=7, help="klc --help runs per spec")
    args = ap.parse_args()
    specs = args.specs or ["", "[ray]", "[plot]", "[tune]", "[llm]"]
    base = Path(tempfile.mkdtemp(prefix="klc-footprint-"))
    try:
        clone = base / "klc"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "-q", args.rev], check=True)
        rev = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short", "HEAD"],
                             check=True, capture_output=True, text=True).stdout.strip()
        print(f"klc {rev}, Python {sys.version.split()[0]}, {args.runs} runs of klc --help")
        print(f"{'install':<24} {'MB':>8} {'pkgs':>5} {'first s':>8} {'median s':>9}  "
              "optional packages present")
        for spec in specs:
            m = measure(clone, spec, args.runs, base)
            print(f"{m['spec']:<24} {m['mb']:>8.0f} {m['packages']:>5} {m['first_s']:>8.2f} "
                  f"{m['median_s']:>9.2f}  {', '.join(m['has']) or '-'}", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
