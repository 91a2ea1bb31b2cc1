"""How often `klc spec init` drafts a spec that gates without edits.

For each kernel of bench/heldout/ (its klc-spec block removed) and each kernel of the
training-style file bench/spec_init/train_step.cu (host launchers and a main, no spec), draft
the spec (klc.spec_draft), check it against the signature (the gate's check_spec), and, where
there is a GPU, gate the drafted file against itself (verify at the verify sizes and at the
profiling size, profile, SOL). Prints one row per kernel and the totals; --json writes them.

    python bench/spec_init_heldout.py [--json OUT] [--no-gate]

Without a GPU the gate compiles only: the count of "gated" is then the count that compiled.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from klc.cuda.parse import parse_bytes  # noqa: E402
from klc.errors import KlcError  # noqa: E402
from klc.gate import gate, gpu_status  # noqa: E402
from klc.gate.profile import Budget  # noqa: E402
from klc.spec import check_spec, find_spec_block, load_spec  # noqa: E402
from klc.spec_draft import draft_spec  # noqa: E402

QUICK = Budget(warmup=2, target_s=0.05, max_runs=50, min_runs=10, check_runs=10)


def cases() -> list[tuple[str, bytes, str | None]]:
    out = []
    for f in sorted((ROOT / "bench" / "heldout").glob("*.cu")):
        src = f.read_bytes()
        span = find_spec_block(src)
        if span is not None:
            src = src[:span[0]] + src[span[1]:].lstrip(b"\n")
        out.append((f"heldout/{f.name}", src, None))
    train = ROOT / "bench" / "spec_init" / "train_step.cu"
    src = train.read_bytes()
    for name in re.findall(rb"__global__ void (\w+)\(", src):
        out.append((f"spec_init/train_step.cu:{name.decode()}", src, name.decode()))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="OUT")
    ap.add_argument("--no-gate", action="store_true")
    args = ap.parse_args()
    arch, why = gpu_status()
    print(f"device: {arch or 'none'} {why}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="klc-spec-init-") as tmp:
        for label, src, kernel in cases():
            row: dict[str, object] = {"kernel": label}
            t0 = time.perf_counter()
            try:
                draft = draft_spec(parse_bytes(src, label), kernel)
            except KlcError as e:
                row.update(stage="draft", result="refused", reason=str(e))
                rows.append(row)
                print(f"{label:55s} refused: {e}")
                continue
            row["draft_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
            row["guessed"] = len(draft.guessed)
            row["host_launch"] = draft.host_launch
            if draft.todo:
                row.update(stage="draft", result="todo", reason="; ".join(draft.todo))
                rows.append(row)
                print(f"{label:55s} TODO: {draft.todo[0]}")
                continue
            path = str(Path(tmp) / (label.replace("/", "_").replace(":", "_")))
            full = draft.text.encode() + src
            try:
                spec = load_spec(full, path)
                assert spec is not None
                check_spec(spec, parse_bytes(full, path))
            except KlcError as e:
                row.update(stage="check", result="bad", reason=str(e))
                rows.append(row)
                print(f"{label:55s} check failed: {e}")
                continue
            row["sizes"] = draft.sizes
            if args.no_gate:
                row.update(stage="check", result="ok")
                rows.append(row)
                print(f"{label:55s} drafted, checks")
                continue
            rec = gate(full, path, budget=QUICK)
            row.update(stage="gate", result=rec.verdict, reason=rec.reason,
                       gate_s=round(rec.elapsed_s, 2))
            v = rec.stages.get("verify")
            if v is not None and v.data.get("profile_size"):
                row["profile_size"] = v.data["profile_size"]
            rows.append(row)
            print(f"{label:55s} gate {rec.verdict} ({rec.elapsed_s:.1f} s)"
                  + ("" if rec.verdict in ("passed", "compiled") else f": {rec.reason[:300]}"))
    held = [r for r in rows if str(r["kernel"]).startswith("heldout/")]
    train = [r for r in rows if not str(r["kernel"]).startswith("heldout/")]
    good = ("passed",) if arch else ("compiled", "ok")
    for name, group in (("bench/heldout", held), ("train_step.cu", train)):
        drafted = sum(r["result"] not in ("refused", "todo") for r in group)
        gated = sum(r["result"] in good for r in group)
        what = "gate passed" if arch else "compiled/checked (no GPU: not gated)"
        print(f"{name}: drafted without TODO {drafted}/{len(group)}, {what} without edits "
              f"{gated}/{len(group)}")
    if args.json:
        Path(args.json).write_text(json.dumps({"device": arch, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
