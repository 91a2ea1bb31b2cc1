"""How often `klc spec init` drafts a spec for real host code that checks and gates without
edits.

The cases are the plain kernels that real files launch from their own host code (training,
inference and sample repositories listed in a cases file, read from checkouts, never copied
here). For each: draft the spec (klc.spec_draft, with the repository's -I folders), check it
against the signature (the gate's check_spec), and gate the drafted file against itself
(compile only without a GPU; with one, verify and profile too). Prints one row per kernel and
the totals; --json writes the rows.

    python bench/spec_init_real.py --sources DIR [--cases FILE] [--json OUT] [--no-gate] [-j N]

``-j N`` drafts and gates N kernels at a time, in worker processes (on a GPU they share it:
the figure counts verdicts, and the profile's timings are not reported).

SOURCES/OWNER+NAME must be a checkout of the commit the cases file names (for example
`git clone https://github.com/OWNER/NAME SOURCES/OWNER+NAME && git -C ... checkout COMMIT`).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from klc.cuda import flags as build_flags  # noqa: E402
from klc.cuda.parse import parse_bytes, read_source  # noqa: E402
from klc.errors import KlcError  # noqa: E402
from klc.gate import gate, gpu_status  # noqa: E402
from klc.gate.profile import Budget  # noqa: E402
from klc.spec import check_spec, load_spec  # noqa: E402
from klc.spec_draft import draft_spec, with_block  # noqa: E402

QUICK = Budget(warmup=2, target_s=0.05, max_runs=50, min_runs=10, check_runs=10)


def read_cases(path: Path, sources: Path) -> list[tuple[str, Path, tuple[str, ...]]]:
    """(label, file, -I folders) of every file the cases file names."""
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        head, _, globs = line.partition(" -- ")
        words = shlex.split(head)
        if len(words) < 2 or not globs.strip():
            sys.exit(f"{path}:{n}: expected OWNER/NAME COMMIT [-I DIR]... -- PATH...")
        repo, inc = words[0], []
        root = sources / repo.replace("/", "+")
        if not root.is_dir():
            sys.exit(f"{path}:{n}: {root} is not a checkout of {repo} at {words[1]}")
        for i, w in enumerate(words[2:]):
            if w == "-I" and i + 3 < len(words):
                inc.append(str((root / words[i + 3]).resolve()))
        for g in shlex.split(globs):
            for f in sorted(root.glob(g)):
                out.append((f"{repo}/{f.relative_to(root)}", f, tuple(inc)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sources", required=True, type=Path)
    ap.add_argument("--cases", type=Path, default=ROOT / "bench" / "spec_init" /
                    "real_cases.txt")
    ap.add_argument("--json", metavar="OUT")
    ap.add_argument("--no-gate", action="store_true")
    ap.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                    help="kernels drafted and gated at a time (worker processes)")
    args = ap.parse_args()
    arch, why = gpu_status()
    device = gpu_name() if arch else None
    print(f"device: {device or arch or 'none'} {why}")
    rows: list[dict[str, object]] = []
    tasks: list[tuple[str, str, tuple[str, ...], str, bool]] = []
    for label, path, include in read_cases(args.cases, args.sources):
        build_flags.set_flags(build_flags.BuildFlags(include))
        try:
            unit = parse_bytes(read_source(path), str(path))
        except KlcError as e:
            rows.append({"kernel": label, "result": "unreadable", "reason": str(e)})
            continue
        launched = {ln.kernel for ln in unit.launches}
        tasks += [(f"{label}:{fn.name}", str(path), include, fn.name, not args.no_gate)
                  for fn in unit.kernels if fn.name in launched and not fn.template_params]
    if args.jobs > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(args.jobs, mp.get_context("spawn")) as pool:
            done = list(pool.map(run_task, tasks))
    else:
        done = map(run_task, tasks)
    for r in done:
        rows.append(r)
        print(f"{str(r['kernel'])[-70:]:70s} {r['result']:9s} "
              f"{'host' if r.get('host_launch') else '-':4s} "
              f"{str(r.get('reason', ''))[:160]}", flush=True)
    kernels = [r for r in rows if r["result"] != "unreadable"]
    hosted = [r for r in kernels if r.get("host_launch")]
    good = ("passed",) if arch else ("compiled", "ok")
    checked = [r for r in kernels if r["result"] not in ("refused", "todo", "bad")]
    gated = [r for r in kernels if r["result"] in good]
    what = "gate passed" if arch else "compiled (no GPU: verify and profile not run)"
    print(f"kernels launched from their file's host code: {len(kernels)}; drafted from the "
          f"launch {len(hosted)}; drafted and pass spec check {len(checked)}; {what} without "
          f"edits {len(gated)} ({100 * len(gated) / max(1, len(kernels)):.0f}%)")
    if args.json:
        Path(args.json).write_text(json.dumps({"device": device or arch, "arch": arch,
                                               "rows": rows}, indent=1))
    return 0


def gpu_name() -> str | None:
    """The GPU's name (device 0), for the record."""
    try:
        import cupy

        name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:  # (no GPU: gpu_status said why)
        return None


def run_task(task: tuple[str, str, tuple[str, ...], str, bool]) -> dict[str, object]:
    """One kernel: its file read and parsed with its -I folders, drafted, checked, gated."""
    label, path, include, kernel, gate_it = task
    build_flags.set_flags(build_flags.BuildFlags(include))
    src = read_source(Path(path))
    return one(label, src, parse_bytes(src, path), kernel, Path(path), gate_it)


def one(label: str, src: bytes, unit: object, kernel: str, path: Path,
        gate_it: bool) -> dict[str, object]:
    row: dict[str, object] = {"kernel": label}
    t0 = time.perf_counter()
    try:
        draft = draft_spec(unit, kernel)  # type: ignore[arg-type]
    except KlcError as e:
        return {**row, "result": "refused", "reason": str(e)}
    row["draft_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
    row["guessed"] = len(draft.guessed)
    row["host_launch"] = draft.host_launch
    if draft.todo:
        return {**row, "result": "todo", "reason": "; ".join(draft.todo)}
    # named beside the original (nothing is written), so that its quoted includes resolve
    out = path.with_name(f"{path.stem}.{kernel}.cu")
    full = with_block(src, draft.text)
    try:
        spec = load_spec(full, str(out))
        assert spec is not None
        check_spec(spec, parse_bytes(full, str(out)))
    except KlcError as e:
        return {**row, "result": "bad", "reason": str(e)}
    row["sizes"] = draft.sizes
    if not gate_it:
        return {**row, "result": "ok"}
    rec = gate(full, str(out), budget=QUICK)
    return {**row, "result": rec.verdict, "reason": rec.reason, "gate_s": round(rec.elapsed_s, 2)}


if __name__ == "__main__":
    sys.exit(main())
