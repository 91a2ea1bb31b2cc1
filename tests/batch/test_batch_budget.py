"""``klc batch --optimize`` shares one budget between files by headroom: a first pass gates
each original against itself (its % of SOL; optimize's own baseline, so the second pass finds
it in the gate cache), then the files get ``split_budget``'s shares. Run in this process
against a scripted gate (the optimizer's ``gate_fn``); the split itself is tested in
tests/optimize/test_headroom.py."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from klc.batch import BatchConfig, BatchOptions, run_batch
from klc.cli import main
from klc.gate import GateRecord, StageResult
from klc.optimize.headroom import split_budget

ROOT = Path(__file__).resolve().parents[2]
SIGMOID = (ROOT / "bench" / "examples" / "sigmoid.cu").read_bytes()
SKILLS = ROOT / "tests" / "data" / "skills"  # launch bounds (a hole) and fast exp


class PctGate:
    """Every candidate passes and runs as fast as its original; a file's original runs at
    the % of SOL its ``// pct: N`` line says."""

    def __init__(self) -> None:
        self.calls: list[tuple[bytes, bytes | None]] = []

    def __call__(self, candidate: bytes, path: str, *, reference: bytes | None = None,
                 reference_path: str | None = None, arch: str | None = None,
                 stages: Iterable[str] = (), seeds: Iterable[int] | None = None,
                 timeout_s: float | None = None) -> GateRecord:
        self.calls.append((candidate, reference))
        m = re.search(rb"// pct: (\d+)", candidate)
        pct = float(m.group(1)) if m else 50.0
        data: dict[str, Any] = {"median_ms": 1.0, "noise": 0.004,
                                "sol": {"pct_of_sol": pct, "bound": "memory"}}
        if reference is not None:
            data["speedup"] = 1.0
        st = {"compile": StageResult("passed", "compiled", {}),
              "verify": StageResult("passed", "agree", {"seeds": list(seeds or [1, 2, 3])}),
              "profile": StageResult("passed", "timed", data)}
        return GateRecord(path, "sigmoid", hashlib.sha256(candidate).hexdigest(),
                          reference_path, None, arch or "sm_90", (), "Scripted GPU", st,
                          verdict="passed", reason="all stages passed")


PCTS = {"far.cu": 3, "mid.cu": 40, "near.cu": 80, "done.cu": 95}


def _tree(root: Path) -> Path:
    root.mkdir()
    for name, pct in PCTS.items():
        (root / name).write_bytes(SIGMOID + f"// pct: {pct}\n".encode())
    return root


def _config(gate: PctGate, cache: Path, **opts: Any) -> BatchConfig:
    return BatchConfig.from_paths([str(SKILLS)], optimize=True, arch="sm_90",
                                  optimize_options=(("gpu", True), ("gate_fn", gate),
                                                    ("cache_dir", str(cache)),
                                                    ("recipes", []), *opts.items()))


def test_one_budget_is_shared_by_headroom(tmp_path: Path) -> None:
    src = _tree(tmp_path / "src")
    gate = PctGate()
    s = run_batch(_config(gate, tmp_path / "gate", total_budget=14),
                  BatchOptions([str(src)], mode="check", jobs=1, gpus=[]))
    assert not s.failed
    by_name = {Path(r.path).name: r for r in s.results}
    # the first pass spent one trial per original; the other 10 were split by headroom
    want = split_budget(10, {str(src / n): float(p) for n, p in PCTS.items()})
    got = {str(src / n): (r.optimize or {}).get("budget", 0) for n, r in by_name.items()}
    assert got == want
    assert got[str(src / "far.cu")] > got[str(src / "mid.cu")] > got[str(src / "near.cu")]
    assert got[str(src / "done.cu")] == 0
    assert by_name["done.cu"].optimize is None
    assert any("no share of the batch's budget" in n for n in by_name["done.cu"].notes)
    for name in ("far.cu", "mid.cu", "near.cu"):
        doc = by_name[name].optimize or {}
        assert doc["trials_used"] <= doc["budget"]
        assert doc["trials"][0]["cached"]  # the baseline: the first pass's gate run
    originals = [c for c, ref in gate.calls if ref is None]
    assert len(originals) == len(set(originals)) == 4  # each original gated once in all
    assert any("14 gate trials shared by headroom: 4 gated the originals" in n
               for n in s.notes), s.notes
    # the near-SOL file tried only the cheap skills, and no structural one (none here)
    assert (by_name["near.cu"].optimize or {})["ranking"][0]["regime"] == "near"


def test_default_budget_is_per_file_times_files(tmp_path: Path) -> None:
    src = _tree(tmp_path / "src")
    s = run_batch(_config(PctGate(), tmp_path / "gate", budget=3),
                  BatchOptions([str(src)], mode="check", jobs=1, gpus=[]))
    shares = {Path(r.path).name: (r.optimize or {}).get("budget", 0) for r in s.results}
    assert sum(shares.values()) == 3 * 4 - 4  # 12, less the four originals' gate runs
    assert shares["far.cu"] == max(shares.values()) and shares["done.cu"] == 0


def test_without_a_measured_headroom_each_file_keeps_its_budget(tmp_path: Path) -> None:
    """No GPU: nothing is measured, so the batch does what it did before (each file the
    per-file budget), and says nothing about sharing."""
    src = _tree(tmp_path / "src")
    s = run_batch(_config(PctGate(), tmp_path / "gate", budget=3, gpu=False),
                  BatchOptions([str(src)], mode="check", jobs=1, gpus=[]))
    assert {(r.optimize or {}).get("budget") for r in s.results} == {3}
    assert not any("shared by headroom" in n for n in s.notes)


@pytest.mark.parametrize(("argv", "message"), [
    (["--optimize", "--total-budget", "0"], "--total-budget 0: give at least 1 gate trial"),
    (["--optimize", "--budget", "-2"], "--budget -2: give at least 1 gate trial"),
    (["--total-budget", "9"], "--total-budget is an --optimize option"),
])
def test_bad_budgets_exit_2(tmp_path: Path, argv: list[str], message: str,
                            capsys: pytest.CaptureFixture[str]) -> None:
    src = _tree(tmp_path / "src")
    assert main(["batch", str(src), *argv]) == 2
    assert message in capsys.readouterr().err


def test_total_budget_without_a_gpu_is_split_evenly(tmp_path: Path) -> None:
    src = _tree(tmp_path / "src")
    gate = PctGate()
    s = run_batch(_config(gate, tmp_path / "gate", total_budget=10, gpu=False),
                  BatchOptions([str(src)], mode="check", jobs=1, gpus=[]))
    shares = [(r.optimize or {}).get("budget", 0) for r in s.results]
    assert sum(shares) == 10 and max(shares) - min(shares) <= 1
    # no original gated against itself: no first pass without a GPU (the static part of
    # optimize compiles its candidates against their original)
    assert not [c for c, ref in gate.calls if ref is None]
    assert any("10 gate trials shared by headroom: 0 gated the originals" in n for n in s.notes)
