"""Wall time of one gate trial, cold and warm, with the persistent worker and with one
process per trial, on a GPU.

Subjects: ``bench/examples/saxpy.cu`` against itself, and the first step of a lineage
(default softmax) against its expert. Each trial gates a fresh variant of the candidate (a
comment with the trial's number appended: a new source, so NVRTC compiles it, as it does for
every candidate of ``klc optimize``) against the same reference, with all three stages.
Then the same variant once more ("compiled": the cubin is cached, so that trial is the GPU
part and the gate's own overhead).

cold: the mode's first trial (worker: the worker starts, with Python, CuPy, the CUDA context
and the SOL figures from the disk cache, and the reference is timed in full); warm: the
median (min-max) of the next ``--trials`` trials. A first, unreported trial makes sure the
device's SOL figures are on disk, so no mode pays for measuring them.

    python bench/gate_speed.py [--trials 6] [--lineage softmax] [--modes process,worker]
                               [--out bench/results/gate_speed.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from klc.gate import GateRecord, gate, gpu_status  # noqa: E402
from klc.gate.worker import pool  # noqa: E402


def subjects(lineage: str) -> list[tuple[str, bytes, bytes]]:
    """(name, candidate, reference) for each subject."""
    saxpy = (ROOT / "bench/examples/saxpy.cu").read_bytes()
    fam = ROOT / "bench/lineages" / lineage
    step = sorted(p for p in (fam / "walk").glob("v*.cu") if not p.name.startswith("v00_"))[0]
    return [("examples/saxpy (self)", saxpy, saxpy),
            (f"lineages/{lineage}/{step.name}", step.read_bytes(),
             (fam / "expert.cu").read_bytes())]


def trial(name: str, source: bytes, reference: bytes, mode: str) -> tuple[float, GateRecord]:
    t0 = time.perf_counter()
    rec = gate(source, f"{name}.cu", reference=reference, reference_path=f"{name} (reference)",
               isolation=mode)
    return time.perf_counter() - t0, rec


def measure(name: str, cand: bytes, ref: bytes, mode: str, trials: int, tag: str
            ) -> dict[str, Any]:
    if mode == "worker":
        pool().shutdown()  # the cold trial starts a worker
    fresh: list[float] = []
    compiled: list[float] = []
    records: list[dict[str, Any]] = []
    for i in range(trials + 1):
        variant = cand + f"\n// gate_speed {tag} {mode} trial {i}\n".encode()
        wall, rec = trial(name, variant, ref, mode)
        if rec.verdict != "passed":
            raise SystemExit(f"{name} ({mode}, trial {i}): the gate did not pass: {rec.reason}")
        fresh.append(wall)
        wall_again, rec_again = trial(name, variant, ref, mode)
        compiled.append(wall_again)
        records.append(rec_again.to_json())
    warm, warm_c = fresh[1:], compiled[1:]
    prof = records[-1]["stages"]["profile"]
    return {
        "subject": name, "mode": mode, "cold_s": fresh[0], "cold_compiled_s": compiled[0],
        "warm_median_s": statistics.median(warm), "warm_min_s": min(warm),
        "warm_max_s": max(warm), "warm_compiled_median_s": statistics.median(warm_c),
        "trials": trials, "device": records[-1]["device"],
        "candidate_runs": prof["series"]["candidate"]["runs"],
        "median_ms": prof["median_ms"], "noise": prof["noise"],
        "speedup": prof.get("speedup"),
        "reference_cached": [r["stages"]["profile"]["series"].get("reference", {}).get("cached")
                             for r in records],
        "walls_s": fresh, "walls_compiled_s": compiled,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=6, help="warm trials per mode and subject")
    ap.add_argument("--lineage", default="softmax")
    ap.add_argument("--modes", default="process,worker")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    arch, why = gpu_status()
    if arch is None:
        print(f"gate_speed: needs a GPU ({why})", file=sys.stderr)
        return 2
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    tag = str(time.time_ns())  # new sources every run: no compile cache from an earlier run
    rows = []
    for name, cand, ref in subjects(args.lineage):
        _, prime = trial(name, cand, ref, "process")  # SOL figures and reference cubin cached
        if prime.verdict != "passed":
            print(f"gate_speed: {name}: {prime.reason}", file=sys.stderr)
            return 1
        for mode in modes:
            rows.append(measure(name, cand, ref, mode, args.trials, tag))
    pool().shutdown()
    table = Table(title=f"gate trial wall time on {rows[0]['device']} (s)")
    for col in ("subject", "mode", "cold", "warm median", "warm min-max", "warm, compiled",
                "cand runs", "kernel ms", "ref cached"):
        table.add_column(col, justify="left" if col in ("subject", "mode") else "right")
    for r in rows:
        cached = r["reference_cached"]
        table.add_row(r["subject"], r["mode"], f"{r['cold_s']:.2f}",
                      f"{r['warm_median_s']:.2f}",
                      f"{r['warm_min_s']:.2f}-{r['warm_max_s']:.2f}",
                      f"{r['warm_compiled_median_s']:.2f}", str(r["candidate_runs"]),
                      f"{r['median_ms']:.4f}",
                      f"{sum(1 for c in cached if c)}/{len(cached)}")
    Console().print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"rows": rows}, indent=2) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
