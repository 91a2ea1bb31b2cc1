"""Gate every kernel of the blind transfer set (bench/transfer/) against itself, on a GPU.

Each file goes through the full gate with no reference (compile, verify: deterministic,
every output written, inside its buffers, inputs untouched, also at the profiling size;
profile with CUDA events; % of the speed-of-light floor). The table of times and % of SOL is
the baseline that `klc optimize` on this set is measured against.

    python bench/transfer_baseline.py [FILE...] [--out-dir DIR] [--deadline-s S]

Writes DIR/transfer_baseline_<device>.json (one summary per kernel, plus the device's SOL
figures) and DIR/transfer_baseline_<device>.md (the table). Files still waiting when
--deadline-s has passed are listed as not run, so that one bounded device call always ends
with a table.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from klc.errors import KlcError  # noqa: E402
from klc.gate import gate  # noqa: E402

TRANSFER = ROOT / "bench" / "transfer"


def family_of(path: Path) -> str:
    m = re.search(r"^// family: (\S+)", path.read_text(errors="replace"), re.M)
    return m.group(1) if m else "?"


def summarize(path: Path, data: dict[str, Any], wall_s: float) -> dict[str, Any]:
    """The few numbers the table needs, from a gate record's JSON."""
    stages = data.get("stages", {})
    prof = stages.get("profile", {}) or {}
    sol = prof.get("sol", {}) or {}
    ver = stages.get("verify", {}) or {}
    comp = stages.get("compile", {}) or {}
    res = next(iter((comp.get("resources") or {}).values()), {}) or {}
    big = ver.get("profile_size") or {}
    ms = prof.get("median_ms")
    return {
        "file": path.name,
        "family": family_of(path),
        "kernel": data.get("kernel"),
        "device": data.get("device"),
        "verdict": data.get("verdict"),
        "reason": data.get("reason", ""),
        "median_us": round(ms * 1e3, 2) if ms else None,
        "pct_of_sol": round(sol["pct_of_sol"], 1) if "pct_of_sol" in sol else None,
        "floor_us": round(sol["floor_s"] * 1e6, 2) if "floor_s" in sol else None,
        "bound": sol.get("bound"),
        "headroom": round(sol["headroom"], 2) if sol.get("headroom") else None,
        "noise": round(prof["noise"], 4) if "noise" in prof else None,
        "bytes": sol.get("bytes"),
        "flops": sol.get("flops"),
        "l2_flushed": prof.get("l2_flushed"),
        "registers": res.get("registers"),
        "verify_cases": len(ver.get("cases", []) or []),
        "profile_size_checked": bool(big) and not big.get("skipped"),
        "gate_wall_s": round(wall_s, 2),
        "figures": prof.get("figures"),
    }


def device_slug(name: str | None) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", name or "unknown").strip("_")


def markdown(rows: list[dict[str, Any]], device: str, figures: dict[str, Any] | None) -> str:
    done = [r for r in rows if r["pct_of_sol"] is not None]
    lines = [
        f"# Transfer set baseline on {device}",
        "",
        "`python bench/transfer_baseline.py`: every kernel of `bench/transfer/` through the "
        "full gate against itself (verify: 3 seeds x its verify sizes plus one seed at the "
        "profiling size; profile: CUDA events, the candidate timed twice, interleaved). "
        "% of SOL = the floor (max of bytes / copy bandwidth and flops / peak, from the "
        "spec's `bytes` and `flops`) over the median time; headroom = time / floor.",
        "",
    ]
    if figures:
        bw = figures.get("bandwidth_Bps")
        peaks = figures.get("peaks_flops", {})
        lines += [f"Floor figures measured by the gate on this device: copy bandwidth "
                  f"{bw / 1e12:.2f} TB/s (read + written), fp32 "
                  f"{peaks.get('fp32', 0) / 1e12:.1f} TFLOP/s.", ""]
    lines += [
        "| file | family | kernel | verdict | median us | floor us | % of SOL | headroom "
        "| bound |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]

    def cell(v: Any, fmt: str = "{}") -> str:
        return "-" if v is None else fmt.format(v)

    for r in rows:
        lines.append(
            f"| `{r['file']}` | {r['family']} | `{r['kernel'] or '-'}` | {r['verdict']} "
            f"| {cell(r['median_us'], '{:.1f}')} | {cell(r['floor_us'], '{:.1f}')} "
            f"| {cell(r['pct_of_sol'], '{:.1f}')} | {cell(r['headroom'], '{:.1f}')} "
            f"| {cell(r['bound'])} |")
    bad = [r for r in rows if r["verdict"] != "passed"]
    lines += ["", f"{len(done)} of {len(rows)} kernels timed; "
              f"{sum(r['verdict'] == 'passed' for r in rows)} passed the gate."]
    if done:
        under30 = [r for r in done if r["pct_of_sol"] < 30]
        lines.append(f"{len(under30)} run under 30% of SOL (the target: each of those "
                     "at least 3x faster after `klc optimize`, or a named missing skill).")
    if bad:
        lines += ["", "## Not passed", ""]
        lines += [f"- `{r['file']}`: {r['verdict']}: {r['reason'][:400]}" for r in bad]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--out-dir", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--deadline-s", type=float, default=None,
                    help="stop starting new kernels after this many seconds")
    args = ap.parse_args()
    files = [p.resolve() for p in args.files] or sorted(TRANSFER.glob("*.cu"))
    start = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for path in files:
        if args.deadline_s is not None and time.perf_counter() - start > args.deadline_s:
            rows.append(summarize(path, {"verdict": "not run",
                                         "reason": "deadline reached"}, 0.0))
            continue
        t0 = time.perf_counter()
        try:
            data = gate(path.read_bytes(), str(path.relative_to(ROOT))).to_json()
        except KlcError as e:
            data = {"verdict": "error", "reason": str(e), "stages": {}}
        row = summarize(path, data, time.perf_counter() - t0)
        rows.append(row)
        print(f"{row['file']:<36}{row['verdict']:<9}{cell_us(row['median_us']):>12}"
              f"{cell_pct(row['pct_of_sol']):>8}{row['gate_wall_s']:>7.1f}s"
              + ("" if row["verdict"] == "passed" else f"  {row['reason'][:300]}"),
              flush=True)
    device = next((r["device"] for r in rows if r.get("device")), None) or "unknown"
    figures = next((r["figures"] for r in rows if r.get("figures")), None)
    for r in rows:
        r.pop("figures", None)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"transfer_baseline_{device_slug(device)}"
    (args.out_dir / f"{stem}.json").write_text(json.dumps(
        {"device": device, "figures": figures, "wall_s": round(time.perf_counter() - start, 1),
         "kernels": rows}, indent=1))
    (args.out_dir / f"{stem}.md").write_text(markdown(rows, device, figures))
    print(f"wrote {args.out_dir / stem}.md and .json ({time.perf_counter() - start:.0f} s)")
    return 0 if all(r["verdict"] == "passed" for r in rows) else 1


def cell_us(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f} us"


def cell_pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}%"


if __name__ == "__main__":
    raise SystemExit(main())
