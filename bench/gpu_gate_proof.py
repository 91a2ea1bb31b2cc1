"""The gate's proof on a GPU machine: measure the device's ceilings, gate the examples and the
bad candidates, print a table, then run the GPU tests.

Run on the device machine from the repository root (results under $OUT, or ./gate_proof):

    python3 bench/gpu_gate_proof.py

Every figure comes from one run on one device: copy bandwidth and arithmetic peaks (measured
by the gate's SOL stage and cached per device), each example's median time and % of SOL,
and, for each bad candidate, the gate's verdict and reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from klc.cuda.parse import read_source  # noqa: E402
from klc.gate import GateRecord, gate  # noqa: E402

DATA = ROOT / "tests" / "data" / "gate"
EXAMPLES = ROOT / "bench" / "examples"
AXPY = DATA / "axpy.cu"

# (label, candidate, reference or None for a self-check, timeout)
RUNS: list[tuple[str, Path, Path | None, float | None]] = [
    ("saxpy (self-check)", EXAMPLES / "saxpy.cu", None, None),
    ("reduce_sum (self-check)", EXAMPLES / "reduce_sum.cu", None, None),
    ("axpy (self-check)", AXPY, None, None),
    ("axpy coarsened x4 vs axpy", DATA / "axpy_coarsened.cu", AXPY, None),
    ("off-by-one bound", DATA / "axpy_off_by_one.cu", AXPY, None),
    ("skips the tail", DATA / "axpy_skip_tail.cu", AXPY, None),
    ("writes nothing", DATA / "axpy_writes_nothing.cu", AXPY, None),
    ("faults (out of bounds)", DATA / "axpy_faults.cu", AXPY, None),
    ("loops forever", DATA / "axpy_hangs.cu", AXPY, 20.0),
    ("race (no __syncthreads)", DATA / "reduce_race.cu", EXAMPLES / "reduce_sum.cu", None),
    ("axpy again, after the bad ones", DATA / "axpy_coarsened.cu", AXPY, None),
]


def run_one(cand: Path, ref: Path | None, timeout: float | None) -> GateRecord:
    return gate(read_source(cand), str(cand.relative_to(ROOT)),
                reference=read_source(ref) if ref else None,
                reference_path=str(ref.relative_to(ROOT)) if ref else None, timeout_s=timeout)


def main() -> int:
    out = Path(os.environ.get("OUT") or ROOT / "gate_proof")
    out.mkdir(parents=True, exist_ok=True)
    os.environ["KLC_CACHE_DIR"] = tempfile.mkdtemp(prefix="klc-proof-cache-")
    rows: list[dict[str, Any]] = []
    figures: dict[str, Any] | None = None
    for label, cand, ref, timeout in RUNS:
        t0 = time.perf_counter()
        try:
            rec = run_one(cand, ref, timeout)
        except Exception:  # a bug in the gate itself: show it and go on with the next run
            traceback.print_exc()
            rows.append({"label": label, "verdict": "error", "reason": traceback.format_exc(),
                         "wall_s": time.perf_counter() - t0, "record": {"device": None}})
            continue
        wall = time.perf_counter() - t0
        prof = rec.stages.get("profile")
        row = {"label": label, "verdict": rec.verdict, "reason": rec.reason, "wall_s": wall,
               "record": rec.to_json()}
        if prof is not None and prof.status == "passed":
            row["median_us"] = prof.data["median_ms"] * 1e3
            row["pct_of_sol"] = prof.data["sol"]["pct_of_sol"]
            row["speedup"] = prof.data.get("speedup")
            row["noise"] = prof.data["noise"]
            figures = figures or prof.data["figures"]
        rows.append(row)
        print(f"[{wall:5.1f} s] {label}: {rec.verdict}", flush=True)
    device = next((r["record"]["device"] for r in rows if r["record"].get("device")), None)
    result = {"device": device, "figures": figures, "runs": rows}
    (out / "gate_proof.json").write_text(json.dumps(result, indent=2))

    env = dict(os.environ, PYTHONUNBUFFERED="1")
    t0 = time.perf_counter()
    tests = subprocess.run([sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-rA",
                            "-p", "no:cacheprovider", "tests/test_gate_gpu.py"], cwd=ROOT,
                           capture_output=True, text=True, env=env)
    (out / "pytest_gpu.log").write_text(tests.stdout + tests.stderr)
    summary = (tests.stdout.strip().splitlines() or ["(no output)"])[-1]
    result["pytest"] = {"returncode": tests.returncode, "summary": summary,
                        "wall_s": time.perf_counter() - t0}
    (out / "gate_proof.json").write_text(json.dumps(result, indent=2))

    print()
    print(f"device: {result['device']}")
    if figures:
        bw = figures["bandwidths_Bps"]
        pk = figures["peaks_flops"]
        print("copy bandwidth: " + ", ".join(f"{k} {v / 1e12:.2f} TB/s" for k, v in bw.items())
              + " (bytes read + written)")
        print("peaks: " + ", ".join(f"{k} {v / 1e12:.1f} TFLOP/s" for k, v in pk.items() if v))
    print(f"{'run':34} {'verdict':8} {'median':>10} {'%SOL':>6} {'vs ref':>7}  reason")
    for r in rows:
        med = f"{r['median_us']:.1f} us" if "median_us" in r else ""
        sol = f"{r['pct_of_sol']:.0f}" if "pct_of_sol" in r else ""
        spd = f"{r['speedup']:.2f}x" if r.get("speedup") else ""
        why = r["reason"] if r["verdict"] != "passed" else ""
        print(f"{r['label']:34} {r['verdict']:8} {med:>10} {sol:>6} {spd:>7}  {why[:150]}")
    print(f"GPU tests: {summary} (exit {tests.returncode})")
    return 0 if tests.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
