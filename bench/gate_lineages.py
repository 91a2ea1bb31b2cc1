"""Gate every version of every lineage in bench/lineages against its expert, on a GPU.

For each family: the expert against itself (determinism, SOL), then each version of its walk
``walk/vNN_<pass>.cu`` (the expert with NN simplifications applied) against the expert, with
the real gate: compile, verify on fresh random inputs (3 seeds x 2 sizes), profile with CUDA
events, % of the speed-of-light floor. Prints one table per family, naive to expert, and
writes every gate record as JSON.

    python bench/gate_lineages.py [--out results.json] [--family reduce_sum]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from klc.errors import KlcError  # noqa: E402
from klc.gate import gate  # noqa: E402


def versions(family: Path) -> list[Path]:
    return [family / "expert.cu", *sorted(p for p in (family / "walk").glob("v*.cu")
                                          if not p.name.startswith("v00_"))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--family", action="append", default=None)
    args = ap.parse_args()
    families = sorted(p for p in (ROOT / "bench/lineages").iterdir()
                      if (p / "expert.cu").exists())
    if args.family:
        families = [f for f in families if f.name in args.family]
    records: dict[str, list[dict]] = {}  # type: ignore[type-arg]
    for fam in families:
        expert = (fam / "expert.cu").read_bytes()
        rows = []
        for v in versions(fam):
            t0 = time.perf_counter()
            try:
                rec = gate(v.read_bytes(), str(v.relative_to(ROOT)),
                           reference=None if v.name == "expert.cu" else expert,
                           reference_path=str((fam / "expert.cu").relative_to(ROOT)))
                data = rec.to_json()
            except KlcError as e:
                data = {"verdict": "error", "reason": str(e), "stages": {}}
            data["version"] = v.stem
            data["wall_s"] = round(time.perf_counter() - t0, 2)
            rows.append(data)
        records[fam.name] = rows
        device = next((r.get("device") for r in rows if r.get("device")), "?")
        print(f"\n{fam.name}  (device: {device})")
        print(f"{'version':<40}{'verdict':<9}{'median us':>10}{'% SOL':>7}{'vs expert':>10}")
        expert_ms = None
        for r in rows:
            prof = r.get("stages", {}).get("profile", {})
            ms = prof.get("median_ms")
            if r["version"] == "expert":
                expert_ms = ms
            pct = prof.get("sol", {}).get("pct_of_sol")
            rel = f"{expert_ms / ms:.2f}x" if ms and expert_ms else "-"
            print(f"{r['version']:<40}{r['verdict']:<9}"
                  f"{(f'{ms * 1e3:.1f}' if ms else '-'):>10}"
                  f"{(f'{pct:.0f}' if pct is not None else '-'):>7}{rel:>10}")
            if r["verdict"] not in ("passed",):
                print(f"    reason: {r.get('reason', '')[:300]}")
    if args.out:
        args.out.write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
