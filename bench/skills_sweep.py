"""Every skill at once, on every kernel the project ships: what ``klc batch --gate`` does.

The lineages' versions (bench/lineages/*/walk/*.cu) and the held-out kernels
(bench/heldout/*.cu) are copied into a temporary folder and run through one gated batch with
the whole skills library, no search: each file gets every applicable site of every skill
(holes at their defaults), then the gate compiles it, verifies it against the original and
times both. Printed (and written with --out): files rewritten and kept, failed the gate
(compile or verify: a skill whose guards let a wrong rewrite through), kept as they were
because the rewrite was measured slower, and the speedups of the kept rewrites.

    python bench/skills_sweep.py [--out bench/results/skills_sweep_NVIDIA_H200.md]

Without a GPU the gate compiles only (tests/test_skills_compile.py asserts that part).
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from klc.batch import BatchConfig, BatchOptions, run_batch  # noqa: E402
from klc.gate.cache import device_name  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="write the summary (markdown) here")
    ap.add_argument("-j", "--jobs", type=int, default=4)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="klc-sweep-") as tmp:
        src = Path(tmp) / "in"
        src.mkdir()
        for f in sorted((ROOT / "bench" / "heldout").glob("*.cu")):
            shutil.copy(f, src / f.name)
        for f in sorted((ROOT / "bench" / "lineages").glob("*/walk/*.cu")):
            shutil.copy(f, src / f"{f.parent.parent.name}_{f.name}")
        summary = run_batch(BatchConfig.from_paths([str(ROOT / "skills")], gate=True),
                            BatchOptions([str(src)], mode="out", out_dir=str(Path(tmp) / "o"),
                                         jobs=args.jobs))
    kept, slower, failed = [], [], []
    for r in summary.results:
        name = Path(r.path).name
        m = re.search(r"([0-9.]+)x the reference", (r.gate or {}).get("reason", ""))
        if r.status == "rewritten" and m:
            kept.append((float(m.group(1)), name))
        elif r.refused_by.get("slower"):
            slower.append((name, r.reason.split(": gate: ", 1)[-1]))
        elif r.status == "gate_failed":
            failed.append((name, r.reason.splitlines()[0]))
    c = summary.counts()
    geo = math.exp(sum(math.log(v) for v, _ in kept) / len(kept)) if kept else float("nan")
    lines = [f"# Every skill at once on the shipped kernels ({device_name() or 'no GPU'})", "",
             f"`python bench/skills_sweep.py`: {c['scanned']} files, {c['sites_rewritten']} "
             f"sites rewritten, {summary.elapsed_s:.0f} s.", "",
             f"- rewritten, verified and kept: {len(kept)} (geomean {geo:.2f}x the original, "
             f"min {min(kept)[0] if kept else 0:.2f}x, max {max(kept)[0] if kept else 0:.2f}x)",
             f"- failed the gate (compile or verify): {len(failed)}",
             f"- verified but slower, kept as they were: {len(slower)}",
             f"- left unchanged (no site applied): {c['unchanged'] - len(slower)}", ""]
    lines += [f"  - failed: `{n}`: {why}" for n, why in failed]
    lines += [f"  - slower: `{n}`: {why}" for n, why in slower]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
