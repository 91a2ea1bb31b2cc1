"""The persistent gate worker without a GPU: the real worker process, protocol and job runner,
with a NumPy device standing in for CUDA (kernels are Python functions picked by their
lowered name, times are the kernel's nominal time). Covers: reuse of one worker across jobs,
retirement after a fault / an out-of-bounds write / an unexpected error, restart after a
crash or a hang (timeout), the reference's cached outputs and timing (with the drift check),
the interleaved profile schedule, the cache keys, and the process-isolation switch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import klc.gate
import klc.gate.worker as worker_mod
from klc.errors import KlcError
from klc.gate import _build_job, _read_side, _timing_key, default_verify_sizes, gate
from klc.gate.profile import Budget, Series, drift, run_rounds
from klc.gate.runner import JobRunner
from klc.gate.session import OutputCache, Session
from klc.gate.worker import GateWorker, WorkerPool, gate_handler, isolation_mode, serve

HERE = Path(__file__).resolve().parent  # this test module (its fake worker imports it)
TESTS = HERE.parent
AXPY = (TESTS / "data" / "gate" / "axpy.cu").read_bytes().replace(b"n: 33554432", b"n: 4096")
FAST = Budget(warmup=1, target_s=0.002, max_runs=30, min_runs=4, check_runs=4)


# --------------------------------------------------------------------------------------
# A NumPy device (also imported by the worker script the tests start)


class FakeCudaError(RuntimeError):
    """Stands for CuPy's CUDARuntimeError."""


def _axpy(a: Any, x: np.ndarray, y: np.ndarray, z: np.ndarray, n: int) -> None:
    z[:] = a * x + y


def _oob(a: Any, x: np.ndarray, y: np.ndarray, z: np.ndarray, n: int) -> None:
    _axpy(a, x, y, z, n)
    base = z.base
    end = np.flatnonzero(np.ones(base.size, dtype=bool))[-1]
    base[end - 4] = 1.0  # past the end, inside the guard zone


def _wrong(a: Any, x: np.ndarray, y: np.ndarray, z: np.ndarray, n: int) -> None:
    _axpy(a, x, y, z, n)
    z[n // 2] += 1.0


def _tail(a: Any, x: np.ndarray, y: np.ndarray, z: np.ndarray, n: int) -> None:
    m = n // 256 * 256
    z[:m] = a * x[:m] + y[:m]


def _race(a: Any, x: np.ndarray, y: np.ndarray, z: np.ndarray, n: int) -> None:
    _axpy(a, x, y, z, n)
    z[0] += np.float32(np.random.default_rng().uniform(1, 2))


def _writes_input(a: Any, x: np.ndarray, y: np.ndarray, z: np.ndarray, n: int) -> None:
    _axpy(a, x, y, z, n)
    x[3] = 0


def _exits(*args: Any) -> None:
    os._exit(3)


def _hangs(*args: Any) -> None:
    time.sleep(600)


def _raises(*args: Any) -> None:
    raise ValueError("a bug in the worker")


KERNELS: dict[str, tuple[Callable[..., None], float]] = {  # name: (body, nominal ms)
    "axpy": (_axpy, 0.5), "axpy_fast": (_axpy, 0.25), "axpy_oob": (_oob, 0.5),
    "axpy_wrong": (_wrong, 0.5), "axpy_tail": (_tail, 0.5), "axpy_race": (_race, 0.5),
    "axpy_writes_input": (_writes_input, 0.5), "axpy_faults": (_axpy, 0.5),
    "axpy_exits": (_exits, 0.5), "axpy_hangs": (_hangs, 0.5), "axpy_raises": (_raises, 0.5),
    "axpy_impossible": (_axpy, 1e-6),
}
INFO = {"name": "Fake GPU", "cc": "90", "sms": 132, "l2_bytes": 50 << 20,
        "memory_bytes": 80 << 30, "max_threads_per_block": 1024,
        "max_smem_per_block_optin": 227 << 10, "max_grid": [2**31 - 1, 65535, 65535],
        "max_block": [1024, 1024, 64], "driver": 1, "runtime": 1}
FIGURES = {"version": 1, "bandwidth_Bps": 4e12, "cached": False,
           "peaks_flops": {"fp32": 6e13, "fp16": 1e14, "fp64": 3e13, "tensor": 9e14}}


class NumpyDevice:
    """The ``CudaDevice`` interface over NumPy: a kernel named ``*_faults`` leaves a sticky
    error that every later synchronise reports, as a faulted CUDA context does."""

    name = "numpy"
    xp = np
    errors = (FakeCudaError,)

    def __init__(self) -> None:
        self.sticky = ""
        self.last = ""
        self.jitter = np.random.default_rng(0)

    def info(self) -> dict[str, Any]:
        return dict(INFO)

    def figures(self, info: dict[str, Any], peaks_cubin: str | None) -> dict[str, Any]:
        return dict(FIGURES)

    def load(self, cubin: str) -> tuple[Any, str]:
        return cubin, f"sha-of-{cubin}"

    def function(self, module: Any, lowered: str, dynamic_smem: int) -> Any:
        if lowered not in KERNELS:
            raise FakeCudaError(f"named symbol not found: {lowered}")
        return lowered

    def launch(self, fn: str, cfg: dict[str, Any], args: list[Any]) -> None:
        self._check()
        self.last = fn
        if fn.endswith("_faults"):
            self.sticky = "cudaErrorIllegalAddress: an illegal memory access was encountered"
            return
        KERNELS[fn][0](*args)

    def _check(self) -> None:
        if self.sticky:
            raise FakeCudaError(self.sticky)

    def sync(self) -> None:
        self._check()

    def to_host(self, a: np.ndarray) -> np.ndarray:
        self._check()
        return np.array(a, copy=True)

    def to_device(self, a: np.ndarray) -> np.ndarray:
        return np.array(a, copy=True)

    def draw(self, seed: int) -> Any:
        from klc.gate.verify import HostDraw

        return HostDraw(np.random.default_rng([seed, 7]))  # "device" data: its own stream

    def flusher(self, l2_bytes: int, footprint: int) -> Callable[[], None] | None:
        return (lambda: None) if footprint < 3 * l2_bytes else None

    def time_calls(self, calls: list[Callable[[], None]],
                   flush: Callable[[], None] | None) -> list[float]:
        out = []
        for call in calls:
            call()
            out.append(KERNELS[self.last][1] * (1 + 0.002 * self.jitter.standard_normal()))
        self._check()
        return out

    def release(self) -> None:
        self._check()


def fake_worker_main() -> None:
    """The worker process of these tests: the real serve loop and job runner, NumPy device."""
    serve(gate_handler(NumpyDevice), int(sys.argv[1]))


# --------------------------------------------------------------------------------------
# Fixtures and helpers


@pytest.fixture
def script(tmp_path: Path) -> Path:
    p = tmp_path / "fake_worker.py"
    p.write_text(f"import sys\nsys.path.insert(0, {str(HERE)!r})\n"
                 "from test_gate_worker import fake_worker_main\nfake_worker_main()\n")
    return p


@pytest.fixture
def pool(script: Path) -> Iterator[WorkerPool]:
    p = WorkerPool(argv=lambda: [sys.executable, str(script), str(os.getpid())])
    yield p
    p.shutdown()


def kernel_file(name: str) -> bytes:
    return AXPY.replace(b"kernel: axpy", f"kernel: {name}".encode()).replace(
        b"void axpy(", f"void {name}(".encode())


def plan(candidate: str, reference: str | None = "axpy", seeds: tuple[int, ...] = (1, 2, 3),
         stages: tuple[str, ...] = ("verify", "profile")) -> dict[str, Any]:
    cand, _ = _read_side(kernel_file(candidate), f"{candidate}.cu")
    ref = _read_side(kernel_file(reference), f"{reference}.cu")[0] if reference else None
    data = ref.bound if ref else cand.bound
    assert data is not None and cand.bound is not None
    sizes = default_verify_sizes(data.spec.sizes, 256)
    job = _build_job(cand.bound, data, ref is None, sizes, list(seeds), list(stages))
    job["kernels"] = {"candidate": {"cubin": f"{candidate}.cubin", "lowered": candidate}}
    if reference:
        job["kernels"]["reference"] = {"cubin": f"{reference}.cubin", "lowered": reference}
    job["peaks_cubin"] = None
    job["budget"] = FAST.to_json()
    return job


def stage(outcome: Any, name: str) -> dict[str, Any]:
    return outcome.result["stages"][name]


def describe(outcome: Any, name: str, timeout: float = 30) -> str:
    st = outcome.result.get("stages", {}).get(name, {})
    return st.get("reason") or outcome.process.describe(timeout)


# --------------------------------------------------------------------------------------
# One worker, many jobs


def test_worker_serves_many_jobs(pool: WorkerPool) -> None:
    first = pool.ping()
    for _ in range(3):
        out = pool.run(plan("axpy_fast"), 30)
        assert stage(out, "verify")["status"] == "passed", describe(out, "verify")
        assert stage(out, "profile")["status"] == "passed", describe(out, "profile")
    assert pool.ping() == {"pid": first["pid"], "jobs": 3}
    assert pool.started == 1 and pool.retired == []
    prof = stage(out, "profile")
    assert list(prof["series"]) == ["candidate", "reference", "candidate (again)"]
    assert prof["speedup"] == pytest.approx(2.0, rel=0.02)
    assert prof["series"]["candidate"]["runs"] >= FAST.min_runs
    assert prof["noise"] < 0.02 and prof["interleaved"] is True
    verify = stage(out, "verify")
    assert len(verify["cases"]) == 6 and verify["inputs_made_on"] == "device"


def test_reference_outputs_reused_for_the_same_seeds(pool: WorkerPool) -> None:
    a = pool.run(plan("axpy_fast", seeds=(5, 6, 7)), 30)
    b = pool.run(plan("axpy_fast", seeds=(5, 6, 7)), 30)
    c = pool.run(plan("axpy_fast", seeds=(8, 6, 7)), 30)
    assert stage(a, "verify")["reference_outputs_reused"] == 0
    assert stage(b, "verify")["reference_outputs_reused"] == 6
    assert stage(c, "verify")["reference_outputs_reused"] == 4  # seed 8: 2 sizes new
    # a wrong candidate is still caught against the cached outputs
    d = pool.run(plan("axpy_wrong", seeds=(5, 6, 7)), 30)
    assert stage(d, "verify")["status"] == "failed"
    assert "differs at z[" in stage(d, "verify")["reason"]


@pytest.mark.parametrize(("name", "needle", "retired"), [
    ("axpy_wrong", "candidate differs at z[", False),
    ("axpy_tail", "candidate left z[", False),
    ("axpy_oob", "candidate wrote out of bounds past the end of z", True),
    ("axpy_writes_input", "candidate wrote into input x (byte 12)", True),
    ("axpy_faults", "CUDA error in the candidate run, verify n=4096 seed=1: "
                    "cudaErrorIllegalAddress", True),
])
def test_bad_candidate_fails_and_next_job_is_sound(pool: WorkerPool, name: str, needle: str,
                                                  retired: bool) -> None:
    pid = pool.ping()["pid"]
    bad = pool.run(plan(name), 30)
    assert stage(bad, "verify")["status"] == "failed"
    assert needle in stage(bad, "verify")["reason"], stage(bad, "verify")["reason"]
    assert "profile" not in bad.result["stages"] or \
        bad.result["stages"]["profile"]["status"] != "passed"
    good = pool.run(plan("axpy_fast"), 30)
    assert stage(good, "verify")["status"] == "passed", describe(good, "verify")
    assert stage(good, "profile")["status"] == "passed"
    assert (pool.ping()["pid"] != pid) == retired
    assert len(pool.retired) == int(retired)


def test_crash_fails_the_job_and_a_fresh_worker_takes_the_next(pool: WorkerPool) -> None:
    pid = pool.ping()["pid"]
    out = pool.run(plan("axpy_exits"), 30)
    msg = describe(out, "verify")
    assert "the child process exited with status 3 during: verify n=4096 seed=1: " \
           "candidate run" in msg, msg
    assert out.result["device"]["name"] == "Fake GPU"  # what the worker said before dying
    assert out.result["stages"].get("verify", {"status": "running"})["status"] == "running"
    good = pool.run(plan("axpy_fast"), 30)
    assert stage(good, "verify")["status"] == "passed"
    assert pool.ping()["pid"] != pid and pool.started == 2


def test_hang_times_out_and_a_fresh_worker_takes_the_next(pool: WorkerPool) -> None:
    pid = pool.ping()["pid"]
    t0 = time.monotonic()
    out = pool.run(plan("axpy_hangs"), 3)
    assert time.monotonic() - t0 < 20
    msg = describe(out, "verify", 3)
    assert out.process.timed_out
    assert "timed out after 3 s during: verify n=4096 seed=1: candidate run" in msg, msg
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    good = pool.run(plan("axpy_fast"), 30)
    assert stage(good, "verify")["status"] == "passed"


def test_unexpected_error_retires_the_worker(pool: WorkerPool) -> None:
    pid = pool.ping()["pid"]
    out = pool.run(plan("axpy_raises"), 30)
    msg = describe(out, "verify")
    assert "the child process failed during: verify n=4096 seed=1: candidate run: " \
           "ValueError: a bug in the worker" in msg, msg
    assert pool.ping()["pid"] != pid


def test_worker_dies_between_jobs_is_replaced_silently(pool: WorkerPool) -> None:
    pid = pool.ping()["pid"]
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    out = pool.run(plan("axpy_fast"), 30)
    assert stage(out, "verify")["status"] == "passed"
    assert pool.ping()["pid"] != pid


def test_self_check_catches_a_race(pool: WorkerPool) -> None:
    out = pool.run(plan("axpy_race", None, stages=("verify",)), 30)
    assert "not deterministic within tolerance" in stage(out, "verify")["reason"]
    ok = pool.run(plan("axpy", None), 30)
    assert stage(ok, "profile")["status"] == "passed"
    assert "reference" not in stage(ok, "profile")["series"] and \
        "speedup" not in stage(ok, "profile")


def test_impossible_time_fails_profile_keeps_its_numbers(pool: WorkerPool) -> None:
    out = pool.run(plan("axpy_impossible"), 30)
    prof = stage(out, "profile")
    assert prof["status"] == "failed" and "impossible time" in prof["reason"]
    assert prof["sol"]["impossible"] and prof["series"]["reference"]["median_ms"] > 0


# --------------------------------------------------------------------------------------
# The reference timed once per series


def test_cached_reference_timing_is_checked_not_retimed(pool: WorkerPool) -> None:
    first = pool.run(plan("axpy_fast"), 30)
    ref = stage(first, "profile")["series"]["reference"]
    assert ref["cached"] is False and ref["runs"] >= FAST.min_runs
    job = plan("axpy_fast")
    job["reference_timing"] = {k: ref[k] for k in ("median_ms", "runs", "spread")}
    second = stage(pool.run(job, 30), "profile")
    got = second["series"]["reference"]
    assert got["cached"] is True and got["check_runs"] == FAST.check_runs
    assert got["runs"] == ref["runs"] and abs(got["drift"]) <= got["drift_tolerance"]
    assert second["speedup"] == pytest.approx(ref["median_ms"] / second["median_ms"])


def test_drifted_reference_timing_is_measured_again(pool: WorkerPool) -> None:
    job = plan("axpy_fast")
    job["reference_timing"] = {"median_ms": 0.4, "runs": 200, "spread": 0.01}
    prof = stage(pool.run(job, 30), "profile")
    ref = prof["series"]["reference"]
    assert ref["cached"] is False and ref["drift"] == pytest.approx(0.25, rel=0.05)
    assert ref["median_ms"] == pytest.approx(0.5, rel=0.01)
    assert prof["speedup"] == pytest.approx(2.0, rel=0.02)


def test_timing_key_ignores_the_seed_not_the_launch() -> None:
    a, b = plan("axpy_fast", seeds=(1, 2, 3)), plan("axpy_fast", seeds=(4, 5, 6))
    for job in (a, b):
        job["kernels"]["reference"]["cubin"] = str(TESTS / "data" / "gate" / "axpy.cu")
    assert _timing_key(a) == _timing_key(b) is not None
    b["profile_case"]["launch"]["reference"]["block"] = [128, 1, 1]
    assert _timing_key(a) != _timing_key(b)
    assert _timing_key(plan("axpy", None)) is None  # no reference, nothing to cache


def test_reference_output_key_depends_on_seed_and_data() -> None:
    session = Session(NumpyDevice)
    job = plan("axpy_fast")
    runner = JobRunner(session, job, lambda t: None, lambda r: None)
    runner.session.start()
    runner.dev = session.device
    runner.functions = runner.load_functions()
    c1, c2 = job["verify_cases"][0], job["verify_cases"][1]
    assert c1["sizes"] == c2["sizes"] and c1["seed"] != c2["seed"]
    assert runner.reference_key(c1, "device") != runner.reference_key(c2, "device")
    assert runner.reference_key(c1, "device") != runner.reference_key(c1, "host")
    assert runner.reference_key(c1, "device") == runner.reference_key(dict(c1), "device")


def test_output_cache_is_bounded_read_only_and_checksummed() -> None:
    cache = OutputCache(max_bytes=3 * 400)
    for i in range(4):
        cache.put(f"k{i}", {"z": np.full(100, i, dtype=np.float32)})
    assert len(cache) == 3 and cache.get("k0") is None and cache.bytes == 1200
    got = cache.get("k1")
    assert got is not None and not got["z"].flags.writeable
    with pytest.raises(ValueError):
        got["z"][0] = 5
    got["z"].flags.writeable = True  # behind the cache's back
    got["z"][0] = 5
    assert cache.get("k1") is None  # the checksum no longer matches: a miss, dropped
    assert len(cache) == 2
    cache.put("big", {"z": np.zeros(1000, dtype=np.float32)})  # larger than the cache
    assert cache.get("big") is None


# --------------------------------------------------------------------------------------
# The interleaved schedule


def _fake_timer(ms: dict[str, float], log: list[list[str]]) -> Callable[[list[str]], list[float]]:
    def time_batch(labels: list[str]) -> list[float]:
        log.append(list(labels))
        return [ms[x.split(" ")[0]] for x in labels]

    return time_batch


def test_rounds_interleave_and_stop_on_budget() -> None:
    log: list[list[str]] = []
    series = [Series("candidate"), Series("reference"), Series("candidate (again)")]
    budget = Budget(warmup=2, target_s=0.01, max_runs=50, min_runs=5)
    run_rounds(series, _fake_timer({"candidate": 1.0, "reference": 2.0}, log), budget)
    assert log[0] == ["candidate", "reference", "candidate (again)"] * 2  # warm-up
    assert log[1][:3] == ["candidate", "reference", "candidate (again)"]
    runs = {s.label: len(s.times) for s in series}
    assert runs == {"candidate": 10, "reference": 5, "candidate (again)": 10}  # 10 ms each
    # the reference's runs came in the same rounds as the candidate's
    assert all(b[:3] == ["candidate", "reference", "candidate (again)"] for b in log[1:2])


def test_rounds_respect_min_and_max_runs() -> None:
    series = [Series("candidate"), Series("candidate (again)")]
    run_rounds(series, _fake_timer({"candidate": 100.0}, []),
               Budget(warmup=0, target_s=0.01, max_runs=40, min_runs=7))
    assert [len(s.times) for s in series] == [7, 7]  # one run is over the budget
    series = [Series("candidate"), Series("candidate (again)")]
    run_rounds(series, _fake_timer({"candidate": 1e-4}, []),
               Budget(warmup=0, target_s=1.0, max_runs=40, min_runs=7))
    assert [len(s.times) for s in series] == [40, 40]


def test_check_series_judged_once() -> None:
    calls: list[int] = []

    def judge(s: Series) -> bool:
        calls.append(len(s.times))
        return False

    series = [Series("candidate"), Series("reference", mode="check"),
              Series("candidate (again)")]
    run_rounds(series, _fake_timer({"candidate": 1.0, "reference": 2.0}, []),
               Budget(warmup=0, target_s=0.05, max_runs=100, min_runs=5, check_runs=6),
               judge)
    assert calls == [6] and len(series[1].times) == 6 and series[1].mode == "checked"
    assert len(series[0].times) == 50


def test_drift_tolerance() -> None:
    rel, tol = drift({"median_ms": 1.0, "spread": 0.0}, [1.005] * 10)
    assert rel == pytest.approx(0.005) and tol == 0.01
    rel, tol = drift({"median_ms": 1.0, "spread": 0.2}, [1.04] * 16)
    assert tol == pytest.approx(0.05) and abs(rel) <= tol


@pytest.mark.parametrize("bad", [dict(min_runs=1), dict(max_runs=5, min_runs=10),
                                 dict(target_s=0), dict(warmup=-1)])
def test_budget_refuses_nonsense(bad: dict[str, Any]) -> None:
    with pytest.raises(KlcError, match="profile budget"):
        Budget(**bad)


# --------------------------------------------------------------------------------------
# Process lifetime and the isolation switch


def test_worker_exits_when_stdin_closes(script: Path) -> None:
    w = GateWorker([sys.executable, str(script), str(os.getpid())])
    reply, _ = w.request("ping", None, 30)
    assert reply is not None and reply["result"]["pid"] == w.pid
    w.stdin.close()
    assert w.proc.wait(timeout=10) == 0


def test_worker_dies_with_its_parent(script: Path, tmp_path: Path) -> None:
    """A parent killed with SIGKILL (no atexit) leaves no worker behind."""
    code = (f"import sys, os, time\nsys.path.insert(0, {str(HERE)!r})\n"
            "from klc.gate.worker import WorkerPool\n"
            f"p = WorkerPool(argv=lambda: [sys.executable, {str(script)!r}, str(os.getpid())])\n"
            "print(p.ping()['pid'], flush=True)\ntime.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.1)
        assert not _alive(pid)
    finally:
        parent.kill()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_isolation_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KLC_GATE_ISOLATION", raising=False)
    assert isolation_mode() == "worker" and isolation_mode("process") == "process"
    monkeypatch.setenv("KLC_GATE_ISOLATION", "process")
    assert isolation_mode() == "process" and isolation_mode("worker") == "worker"
    monkeypatch.setenv("KLC_GATE_ISOLATION", "thread")
    with pytest.raises(KlcError, match="KLC_GATE_ISOLATION='thread'"):
        isolation_mode()
    with pytest.raises(KlcError, match="isolation='none'"):
        gate(AXPY, "axpy.cu", isolation="none")


def test_protocol_refuses_garbage(script: Path) -> None:
    w = GateWorker([sys.executable, str(script), str(os.getpid())])
    w.stdin.write(b"not json\n")
    w.stdin.flush()
    assert w.proc.wait(timeout=10) == 2
    w.kill()


# --------------------------------------------------------------------------------------
# gate() end to end through the pool (real compile, NumPy worker)


@pytest.fixture
def fake_gpu(monkeypatch: pytest.MonkeyPatch, pool: WorkerPool, tmp_path: Path
             ) -> Iterator[WorkerPool]:
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(klc.gate, "gpu_status", lambda: ("sm_90", ""))
    monkeypatch.setattr(worker_mod, "pool", lambda: pool)
    monkeypatch.delenv("KLC_GATE_ISOLATION", raising=False)
    yield pool


def test_gate_through_the_worker(fake_gpu: WorkerPool) -> None:
    ref = kernel_file("axpy")
    recs = [gate(kernel_file(n), f"{n}.cu", reference=ref, reference_path="axpy.cu",
                 budget=FAST)
            for n in ("axpy_fast", "axpy_wrong", "axpy_faults", "axpy_fast")]
    assert [r.verdict for r in recs] == ["passed", "failed", "failed", "passed"], \
        [r.reason for r in recs]
    assert "CUDA error in the candidate run" in recs[2].reason
    first, last = recs[0].profile.data, recs[3].profile.data  # type: ignore[union-attr]
    assert first["series"]["reference"]["cached"] is False
    assert last["series"]["reference"]["cached"] is True  # kept by the parent across workers
    assert last["speedup"] == pytest.approx(2.0, rel=0.02)
    assert recs[0].verify.data["isolation"] == "worker"  # type: ignore[union-attr]
    assert fake_gpu.started == 2  # the fault retired the first worker
    json.dumps([r.to_json() for r in recs])  # the record stays plain JSON


class NoRngDevice(NumpyDevice):
    """A device without cuRAND: inputs are made on the host and uploaded."""

    def draw(self, seed: int) -> Any:
        return None


def test_inputs_on_the_host_when_the_device_cannot_make_them() -> None:
    saved: list[dict[str, Any]] = []
    session = Session(NoRngDevice)
    job = plan("axpy_fast")
    retire = JobRunner(session, job, lambda t: None, saved.append).run()
    result = saved[-1]
    assert retire == "" and result["stages"]["verify"]["status"] == "passed"
    assert result["stages"]["verify"]["inputs_made_on"] == "host"
    assert result["stages"]["profile"]["inputs_made_on"] == "host"
    # a wrong candidate in the same session still fails, and leaves the session usable
    wrong = JobRunner(session, plan("axpy_wrong"), lambda t: None, saved.append)
    assert wrong.run() == "" and "differs at z[" in saved[-1]["stages"]["verify"]["reason"]


def test_report_says_where_the_reference_time_came_from() -> None:
    from rich.console import Console

    from klc.gate import GateRecord, StageResult
    from klc.gate.report import print_record

    def shown(ref: dict[str, Any]) -> str:
        rec = GateRecord("k.cu", "k", "0" * 64, "r.cu", "1" * 64, "sm_90", (), "GPU",
                         {"profile": StageResult("passed", "median", {
                             "series": {"reference": ref}})}, verdict="passed")
        console = Console(record=True, width=200)
        print_record(rec, console)
        return console.export_text()

    assert "reference timed earlier in this series (200 runs), checked now: 10 runs, " \
           "drift +0.4%" in shown({"cached": True, "runs": 200, "check_runs": 10,
                                   "drift": 0.004})
    assert "drifted -5.0% from its earlier timing (tolerance 1.0%)" in shown(
        {"cached": False, "drift": -0.05, "drift_tolerance": 0.01})
    assert "reference timed" not in shown({"cached": False, "median_ms": 1.0})


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "float64"])
def test_compare_equal_bits_and_near_values(dtype: str) -> None:
    """Equal bits pass at once (even both poisoned); the full check still catches the rest."""
    from klc.gate.verify import compare, make_data, poison, storage_dtype

    ref = make_data({"kind": "normal"}, 1000, dtype, np.random.default_rng(1))
    ref[:10] = poison(10, dtype)  # the reference did not write these either
    assert compare("z", ref.copy(), ref, dtype, 1, (1e-4, 1e-6)) is None
    bad = ref.copy()
    bad[500] = bad[501]
    m = compare("z", bad, ref, dtype, 1, (1e-4, 1e-6))
    assert m is not None and m.index == 500
    hole = ref.copy()
    hole[20] = poison(1, dtype)[0]
    m = compare("z", hole, ref, dtype, 1, (1e-4, 1e-6))
    # an integer's poison is a value a kernel may write: only the runs from two poisons
    # (the mask the gate gives) prove an element unwritten
    assert m is not None and m.index == 20
    assert m.kind == ("unwritten" if dtype != "int32" else "mismatch")
    mask = np.zeros(ref.shape, dtype=bool)
    mask[20] = True
    m = compare("z", hole, ref, dtype, 1, (1e-4, 1e-6), unwritten=mask)
    assert m is not None and m.index == 20 and m.kind == "unwritten"
    assert storage_dtype(dtype).itemsize in (1, 2, 4, 8)
