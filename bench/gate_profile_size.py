"""What the check at the profiling size adds to a gate trial.

Gates candidates against their references several times in a row, as `klc optimize` does (one
persistent worker, the reference's timing and outputs reused across trials), and prints per
pair: the whole trial's time, the check's own time (`verify.profile_size.elapsed_ms`) in the
first trial (the reference runs there) and in the later ones (its outputs reused), and the
check's share of the trial. Needs a GPU.

    python bench/gate_profile_size.py [--trials 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from klc.gate import gate, gpu_status  # noqa: E402

PAIRS = [  # (candidate, reference)
    ("tests/data/gate/axpy_coarsened.cu", "tests/data/gate/axpy.cu"),
    ("tests/data/gate/row_scale.cu", "tests/data/gate/row_scale.cu"),
    ("bench/heldout/rms_norm.cu", "bench/heldout/rms_norm.cu"),
    ("bench/heldout/softmax_backward.cu", "bench/heldout/softmax_backward.cu"),
    ("bench/heldout/histogram.cu", "bench/heldout/histogram.cu"),
    ("bench/heldout/embedding_gather.cu", "bench/heldout/embedding_gather.cu"),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args()
    arch, why = gpu_status()
    if arch is None:
        print(f"needs a GPU: {why}")
        return 2
    rows = []
    print(f"{'pair':42s} {'trial s':>8s} {'check 1st ms':>12s} {'check later ms':>14s} "
          f"{'share later':>11s}  buffers")
    for cand, ref in PAIRS:
        trials = []
        for _ in range(args.trials):
            rec = gate((ROOT / cand).read_bytes(), str(ROOT / cand),
                       reference=(ROOT / ref).read_bytes(), reference_path=str(ROOT / ref))
            v = rec.stages.get("verify")
            big = (v.data.get("profile_size") if v is not None else None) or {}
            trials.append({"verdict": rec.verdict, "elapsed_s": rec.elapsed_s,
                           "check_ms": big.get("elapsed_ms"), "reused":
                           big.get("reference_outputs_reused"), "bytes": big.get("bytes"),
                           "skipped": big.get("skipped"), "phases_ms": big.get("phases_ms")})
        later = [t for t in trials[1:] if t["check_ms"] is not None]
        later_ms = statistics.median(t["check_ms"] for t in later) if later else None
        later_s = statistics.median(t["elapsed_s"] for t in trials[1:]) if later else None
        row = {"candidate": cand, "reference": ref, "trials": trials,
               "check_first_ms": trials[0]["check_ms"], "check_later_ms": later_ms,
               "trial_later_s": later_s,
               "share_later": (later_ms / 1e3 / later_s) if later_ms and later_s else None}
        rows.append(row)
        name = f"{Path(cand).name} vs {Path(ref).name}"
        first = trials[0]["check_ms"]
        print(f"{name:42s} {later_s or 0:8.2f} {first or 0:12.1f} {later_ms or 0:14.1f} "
              f"{100 * (row['share_later'] or 0):10.1f}%  "
              f"{(trials[0]['bytes'] or 0) / 2**20:.0f} MiB; verdicts "
              f"{','.join(str(t['verdict']) for t in trials)}"
              + (f"; skipped: {trials[0]['skipped']}" if trials[0]["skipped"] else ""))
        for i in (0, len(trials) - 1):
            ph = trials[i].get("phases_ms") or {}
            print(f"    trial {i + 1} phases: "
                  + ", ".join(f"{k[:-3]} {v:.1f}" for k, v in ph.items()) + " (ms)")
    if args.json:
        Path(args.json).write_text(json.dumps({"device": arch, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
