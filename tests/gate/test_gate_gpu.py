"""The gate on a real GPU: a correct rewrite passes; six kinds of bad candidate are each
rejected with the right reason, and the gate goes on after each; the persistent worker and
one process per trial agree (run on the device machine:
``python3 -m pytest -m gpu tests/gate/test_gate_gpu.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import klc.gate.worker as worker_mod
from klc.cuda.parse import read_source
from klc.gate import GateRecord, gate
from klc.gate.profile import Budget

pytestmark = pytest.mark.gpu

DATA = Path(__file__).resolve().parents[1] / "data" / "gate"
EXAMPLES = Path(__file__).resolve().parents[2] / "bench" / "examples"
AXPY = DATA / "axpy.cu"


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A fresh cache, so that compiling and the device figures are exercised, not reused."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KLC_CACHE_DIR", str(tmp_path_factory.mktemp("klc-cache")))
        mp.delenv("KLC_GATE_ISOLATION", raising=False)
        worker_mod.pool().shutdown()  # workers started from here see this cache
        yield
        worker_mod.pool().shutdown()


def run_gate(candidate: Path, reference: Path | None = AXPY, **kw: object) -> GateRecord:
    return gate(read_source(candidate), str(candidate),
                reference=read_source(reference) if reference else None,
                reference_path=str(reference) if reference else None, **kw)  # type: ignore[arg-type]


def test_correct_rewrite_passes() -> None:
    rec = run_gate(DATA / "axpy_coarsened.cu")
    assert rec.verdict == "passed", rec.reason
    verify = rec.stages["verify"].data
    assert len(verify["seeds"]) >= 3 and len(verify["sizes"]) >= 2
    assert any(v % 256 for s in verify["sizes"] for v in s.values())  # a ragged size ran
    prof = rec.stages["profile"].data
    assert prof["series"]["candidate"]["runs"] >= Budget().min_runs
    assert 0 < prof["sol"]["pct_of_sol"] < 100 / 0.9
    assert prof["speedup"] > 0
    assert rec.device


@pytest.mark.parametrize(("name", "reference", "needle"), [
    ("axpy_off_by_one.cu", AXPY, "wrote out of bounds past the end of z"),
    ("axpy_skip_tail.cu", AXPY, "left z["),
    ("axpy_writes_nothing.cu", AXPY, "left z[0] unwritten"),
    ("axpy_faults.cu", AXPY, "CUDA error in the candidate run"),
    ("reduce_race.cu", EXAMPLES / "reduce_sum.cu", "differs at partial["),
])
def test_bad_candidate_rejected_at_verify(name: str, reference: Path, needle: str) -> None:
    rec = run_gate(DATA / name, reference)
    assert rec.verdict == "failed"
    assert rec.stages["verify"].status == "failed"
    assert needle in rec.stages["verify"].reason, rec.stages["verify"].reason
    assert rec.stages["profile"].status == "skipped"


def test_skipped_tail_names_the_first_tail_element() -> None:
    rec = run_gate(DATA / "axpy_skip_tail.cu")
    reason = rec.stages["verify"].reason
    n = int(reason.split("n=")[1].split()[0])
    assert f"left z[{n // 256 * 256}]" in reason, reason  # the first element past the blocks


def test_hang_is_killed_and_named() -> None:
    rec = run_gate(DATA / "axpy_hangs.cu", timeout_s=20)
    assert rec.verdict == "failed"
    reason = rec.stages["verify"].reason
    assert "timed out after 20 s" in reason and "candidate run" in reason, reason


def test_batch_goes_on_after_fault_and_hang() -> None:
    """A faulting and a hanging candidate, then a correct one: the last still passes."""
    bad = [run_gate(DATA / "axpy_faults.cu"), run_gate(DATA / "axpy_hangs.cu", timeout_s=15)]
    assert [r.verdict for r in bad] == ["failed", "failed"]
    good = run_gate(DATA / "axpy_coarsened.cu", stages=("compile", "verify"))
    assert good.verdict == "passed", good.reason


def test_self_check_catches_race_without_reference() -> None:
    rec = run_gate(DATA / "reduce_race.cu", None, stages=("compile", "verify"))
    assert rec.verdict == "failed"
    assert "not deterministic" in rec.stages["verify"].reason


def test_saxpy_self_check_and_sol() -> None:
    rec = run_gate(EXAMPLES / "saxpy.cu", None)
    assert rec.verdict == "passed", rec.reason
    prof = rec.stages["profile"].data
    figures = prof["figures"]
    assert figures["bandwidth_Bps"] > 1e11
    assert figures["peaks_flops"]["fp32"] > 1e12
    assert 0 < prof["sol"]["pct_of_sol"] < 100 / 0.9


def test_claiming_more_work_than_done_is_impossible(tmp_path: Path) -> None:
    """A spec that claims 100x the bytes makes the measured time impossible: rejected."""
    src = read_source(EXAMPLES / "saxpy.cu").replace(b"bytes: 12 * n", b"bytes: 1200 * n")
    path = tmp_path / "saxpy_claims.cu"
    path.write_bytes(src)
    rec = run_gate(path, None)
    assert rec.verdict == "failed"
    assert "impossible time" in rec.stages["profile"].reason


# -- the persistent worker against one process per trial -----------------------------------

WRONG = b"z[i] = a * x[i] + y[i];"


def _wrong_result(tmp_path: Path) -> Path:
    src = read_source(AXPY)
    assert WRONG in src
    path = tmp_path / "axpy_wrong_result.cu"
    path.write_bytes(src.replace(WRONG, b"z[i] = a * x[i] - y[i];"))
    return path


BAD = [  # (file, reference, the failing stage, what its reason says)
    ("axpy_off_by_one.cu", AXPY, "verify", "wrote out of bounds past the end of z"),
    ("axpy_skip_tail.cu", AXPY, "verify", "left z["),
    ("axpy_writes_nothing.cu", AXPY, "verify", "left z[0] unwritten"),
    ("axpy_faults.cu", AXPY, "verify", "CUDA error in the candidate run"),
    ("axpy_hangs.cu", AXPY, "verify", "timed out after 15 s"),
    ("reduce_race.cu", EXAMPLES / "reduce_sum.cu", "verify", "differs at partial["),
]


def test_worker_and_process_agree_on_verdicts(tmp_path: Path) -> None:
    """Good and bad kernels interleaved, many trials on the workers, the same kernels in a
    process each: the same verdict, the same failing stage, the same kind of reason."""
    cases = [(DATA / f, ref, st, needle) for f, ref, st, needle in BAD]
    cases.append((_wrong_result(tmp_path), AXPY, "verify", "candidate differs at z["))
    good = (DATA / "axpy_coarsened.cu", AXPY, "", "")
    trials = [c for bad in cases for c in (bad, good)]
    pool = worker_mod.pool()
    retired = len(pool.retired)
    for mode in ("worker", "process"):
        for path, ref, stage, needle in trials:
            rec = run_gate(path, ref, isolation=mode, timeout_s=15)
            what = f"{mode}: {path.name}: {rec.reason}"
            if not stage:
                assert rec.verdict == "passed", what
                assert rec.stages["verify"].data["isolation"] == mode
                continue
            assert rec.verdict == "failed", what
            assert rec.stages[stage].status == "failed", what
            assert needle in rec.stages[stage].reason, what
    # a worker was retired after the fault, the hang and the out-of-bounds write only
    assert len(pool.retired) - retired == 3, pool.retired[retired:]


def test_fault_does_not_break_the_next_trial_on_the_worker() -> None:
    pool = worker_mod.pool()
    before = pool.ping()["pid"]
    assert run_gate(DATA / "axpy_coarsened.cu", isolation="worker").passed
    assert pool.ping()["pid"] == before  # a passing trial keeps the worker
    bad = run_gate(DATA / "axpy_faults.cu", isolation="worker")
    assert "CUDA error in the candidate run" in bad.reason
    after = run_gate(DATA / "axpy_coarsened.cu", isolation="worker")
    assert after.verdict == "passed", after.reason
    assert pool.ping()["pid"] != before


def test_worker_trials_are_cheap_and_reuse_the_reference() -> None:
    """Many trials on one worker: inputs made on the device, the reference timed once and
    then checked, and each trial's profile within its budget (bench/gate_speed.py reports the
    wall times)."""
    pool = worker_mod.pool()
    pid = pool.ping()["pid"]
    recs = [run_gate(DATA / "axpy_coarsened.cu", isolation="worker") for _ in range(6)]
    assert all(r.passed for r in recs), [r.reason for r in recs]
    assert pool.ping()["pid"] == pid
    profs = [r.stages["profile"].data for r in recs]
    assert all(p["inputs_made_on"] == "device" for p in profs)
    assert all(r.stages["verify"].data["inputs_made_on"] == "device" for r in recs)
    cached = [p["series"]["reference"]["cached"] for p in profs]
    assert cached.count(True) >= 4, cached  # a drift may re-time it, not every trial
    for p in profs:
        b = Budget()
        for label in ("candidate", "candidate (again)"):
            t = p["series"][label]
            assert b.min_runs <= t["runs"] <= b.max_runs
            assert t["runs"] == b.max_runs or t["runs"] * t["median_ms"] < 3e3 * b.target_s


def test_timings_agree_between_modes() -> None:
    """The same kernels timed by the worker and by a process of their own: medians and
    speedups agree within a loose margin (what changes is the process, not the kernel)."""
    got = {}
    for mode in ("process", "worker", "process", "worker"):
        rec = run_gate(DATA / "axpy_coarsened.cu", isolation=mode)
        assert rec.passed, rec.reason
        got.setdefault(mode, []).append(rec.stages["profile"].data)
    for key in ("median_ms", "speedup"):
        w = min(p[key] for p in got["worker"])
        p_ = min(p[key] for p in got["process"])
        noise = max(p["noise"] for ps in got.values() for p in ps)
        assert abs(w - p_) / p_ < max(0.1, 3 * noise), (key, got)
