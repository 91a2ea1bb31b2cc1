"""Verify at the profiling size, without a GPU: the real job runner over the NumPy device of
test_gate_worker (kernels are Python functions). After the small verify cases, one seed at
the profiling sizes is checked in place (poison, guard zones, inputs, tolerance); the
reference's outputs there are kept for later trials, checksummed; the in-place comparison
agrees with the host one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import pytest
from test_gate_worker import FAST, NumpyDevice

from klc.gate import _build_job, _read_side
from klc.gate.runner import JobRunner
from klc.gate.session import DeviceOutputCache, Session
from klc.gate.verify import (
    GuardedBuffers,
    checksum_in_place,
    compare,
    compare_in_place,
    make_data,
    poison,
    unwritten_count,
)

SPEC = b"""/* klc-spec
kernel: NAME
sizes: {n: 65536}
verify_sizes: [{n: 4096}, {n: 3001}]
args:
  - {name: a, init: "uniform(0.5, 2)"}
  - {name: x, shape: [n], role: in, init: normal}
  - {name: y, shape: [n], role: in, init: normal}
  - {name: z, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
extern "C" __global__ void NAME(float a, const float* x, const float* y, float* z, int n) {}
"""


def _axpy(a: Any, x: np.ndarray, y: np.ndarray, z: np.ndarray, n: int) -> None:
    z[:] = a * x + y


def _half_when_large(a: Any, x: np.ndarray, y: np.ndarray, z: np.ndarray, n: int) -> None:
    m = n // 2 if n >= 32768 else n
    z[:m] = a * x[:m] + y[:m]


def _wrong_when_large(a: Any, x: np.ndarray, y: np.ndarray, z: np.ndarray, n: int) -> None:
    _axpy(a, x, y, z, n)
    if n > 40000:
        z[40000] += 1.0


def _oob_when_large(a: Any, x: np.ndarray, y: np.ndarray, z: np.ndarray, n: int) -> None:
    _axpy(a, x, y, z, n)
    if n > 40000:
        z.base[z.base.size - 3] = 7.0  # in the guard zone after z


def _writes_input_when_large(a: Any, x: np.ndarray, y: np.ndarray, z: np.ndarray,
                             n: int) -> None:
    _axpy(a, x, y, z, n)
    if n > 40000:
        x[50000] = 0.0


MINE: dict[str, Callable[..., None]] = {
    "axpy": _axpy, "axpy_fast": _axpy, "half_when_large": _half_when_large,
    "wrong_when_large": _wrong_when_large, "oob_when_large": _oob_when_large,
    "writes_input_when_large": _writes_input_when_large,
}


class Device(NumpyDevice):
    """The NumPy device with this file's kernels, and a memory size to plan against."""

    free = 1 << 40
    launches: ClassVar[list[tuple[str, int]]] = []

    def function(self, module: Any, lowered: str, dynamic_smem: int) -> Any:
        return lowered

    def launch(self, fn: str, cfg: dict[str, Any], args: list[Any]) -> None:
        self._check()
        self.last = fn
        Device.launches.append((fn, int(args[-1])))
        MINE[fn](*args)

    def time_calls(self, calls: list[Callable[[], None]],
                   flush: Callable[[], None] | None) -> list[float]:
        out = []
        for call in calls:
            call()
            out.append(0.5 if self.last != "axpy_fast" else 0.25)
        return out

    def free_memory(self) -> int:
        return self.free


def job(candidate: str, reference: str | None = "axpy", stages: tuple[str, ...] = ("verify",),
        spec: bytes = SPEC) -> dict[str, Any]:
    cand, _ = _read_side(spec.replace(b"NAME", candidate.encode()), f"{candidate}.cu")
    ref = _read_side(spec.replace(b"NAME", reference.encode()), f"{reference}.cu")[0] \
        if reference else None
    data = ref.bound if ref else cand.bound
    assert data is not None and cand.bound is not None
    j = _build_job(cand.bound, data, ref is None, list(data.spec.verify_sizes), [1, 2],
                   list(stages))
    j["kernels"] = {"candidate": {"cubin": f"{candidate}.cubin", "lowered": candidate}}
    if reference:
        j["kernels"]["reference"] = {"cubin": f"{reference}.cubin", "lowered": reference}
    j["peaks_cubin"] = None
    j["budget"] = FAST.to_json()
    return j


def run(session: Session, j: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    saved: list[dict[str, Any]] = []
    retire = JobRunner(session, j, lambda t: None, saved.append).run()
    return retire, saved[-1]["stages"]["verify"]


def test_the_job_plans_one_seed_at_the_profiling_size() -> None:
    j = job("axpy_fast")
    big = j["profile_size_case"]
    assert big["sizes"] == {"n": 65536} and big["args"]["z"]["elements"] == 65536
    assert big["label"] == f"at the profiling size n=65536 seed={big['seed']}"
    assert big["seed"] == job("half_when_large")["profile_size_case"]["seed"]  # fixed by plan
    assert [c["sizes"]["n"] for c in j["verify_cases"]] == [4096, 4096, 3001, 3001]
    # a profiling size that is also a verify size is not checked twice
    same = SPEC.replace(b"{n: 3001}", b"{n: 65536}")
    assert "profile_size_case" not in job("axpy_fast", spec=same)


def test_a_correct_candidate_passes_and_the_reference_runs_once_per_series() -> None:
    session = Session(Device)
    Device.launches.clear()
    retire, first = run(session, job("axpy_fast"))
    assert retire == "" and first["status"] == "passed", first.get("reason")
    big = first["profile_size"]
    assert big["reference_outputs_reused"] is False and big["reference_outputs_kept"] is True
    assert big["bytes"] == 2 * 3 * 65536 * 4 + 65536 * 4
    _, again = run(session, job("axpy_fast"))
    assert again["profile_size"]["reference_outputs_reused"] is True
    large = [f for f, n in Device.launches if n == 65536]
    assert large == ["axpy", "axpy_fast", "axpy_fast"]  # the reference ran once at 65536


@pytest.mark.parametrize(("name", "needle", "retire"), [
    ("half_when_large", "verify at the profiling size n=65536 seed=", ""),
    ("half_when_large", "candidate left z[32768] unwritten (still the poison NaN; 32768 of "
                        "65536 elements)", ""),
    ("wrong_when_large", "candidate differs at z[40000]:", ""),
    ("oob_when_large", "candidate wrote out of bounds past the end of z", "wrote outside"),
    ("writes_input_when_large", "candidate wrote into input x (byte 200000)", "wrote outside"),
])
def test_bugs_only_at_the_profiling_size_are_caught(name: str, needle: str,
                                                    retire: str) -> None:
    session = Session(Device)
    why, verify = run(session, job(name))
    assert verify["status"] == "failed"
    assert needle in verify["reason"], verify["reason"]
    assert retire in why
    # the small cases alone pass it: the bug lives only at the profiling size
    small = job(name)
    del small["profile_size_case"]
    assert run(Session(Device), small)[1]["status"] == "passed"


def test_self_check_at_the_profiling_size() -> None:
    """Without a reference the kernel's two runs are compared there too."""
    _, verify = run(Session(Device), job("half_when_large", reference=None))
    assert verify["status"] == "failed"
    assert "at the profiling size n=65536" in verify["reason"]
    assert "the reference left z[32768] unwritten" in verify["reason"], verify["reason"]


def test_skipped_with_the_reason_when_memory_is_short() -> None:
    class Small(Device):
        free = 1 << 20

    _, verify = run(Session(Small), job("half_when_large"))
    assert verify["status"] == "passed"  # the small cases pass; the big one could not run
    assert verify["profile_size"]["skipped"].startswith("needs 0.00 GiB of device memory")
    from klc.gate import _summary

    assert "not checked at the profiling size: needs" in _summary("verify", verify)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32",
                                   "uint8"])
def test_compare_in_place_agrees_with_compare(dtype: str) -> None:
    rng = np.random.default_rng(3)
    ref = make_data({"kind": "normal"}, 5000, dtype, rng)
    cases = [ref.copy()]
    if dtype in ("float32", "float64"):
        cases.append((ref * (1 + 1e-7)).astype(ref.dtype))  # within tolerance, not equal bits
    wrong = ref.copy()
    wrong[4321] = wrong[17]
    wrong[4400] = wrong[18]
    cases.append(wrong)
    hole = ref.copy()
    hole[2999:3003] = poison(4, dtype)
    cases.append(hole)
    for cand in cases:
        host = compare("z", cand, ref, dtype, 1, (1e-4, 1e-6))
        here = compare_in_place(np, "z", cand, ref, dtype, 1, (1e-4, 1e-6), chunk=1000)
        assert (host is None) == (here is None), (host, here)
        if host is not None and here is not None:
            assert (here.index, here.kind, here.count) == (host.index, host.kind, host.count)
            assert here.describe() == host.describe()


def test_compare_in_place_nan_and_tolerance() -> None:
    ref = np.linspace(-1, 1, 3000, dtype=np.float32)
    cand = ref * np.float32(1 + 1e-6)
    assert compare_in_place(np, "z", cand, ref, "float32", 1, (1e-4, 1e-6), chunk=512) is None
    cand[2500] = np.nan
    m = compare_in_place(np, "z", cand, ref, "float32", 1, (1e-4, 1e-6), chunk=512)
    assert m is not None and m.kind == "nan" and m.index == 2500
    assert m.describe() == compare("z", cand, ref, "float32", 1, (1e-4, 1e-6)).describe()


def test_unwritten_count_and_guard_checks() -> None:
    a = make_data({"kind": "normal"}, 1000, "float32", np.random.default_rng(0))
    assert unwritten_count(np, a, "float32", chunk=128) == (0, -1)
    a[700:710] = poison(10, "float32")
    a[900] = poison(1, "float32")[0]
    assert unwritten_count(np, a, "float32", chunk=128) == (11, 700)
    plan = [{"name": "x", "kind": "buffer", "dtype": "float32", "role": "in", "elements": 100},
            {"name": "z", "kind": "buffer", "dtype": "float32", "role": "out", "elements": 100}]
    bufs = GuardedBuffers(np, plan)
    from klc.gate.verify import CaseInputs

    inputs = CaseInputs({"x": np.arange(100, dtype=np.float32)}, {}, {})
    bufs.load(inputs)
    assert bufs.check_in_place(np, np.array, inputs, "candidate") == []
    whole, g = bufs.whole["z"]
    whole[g - 1] = 1.0
    bufs.body("x")[5] = -1.0
    problems = bufs.check_in_place(np, np.array, inputs, "candidate")
    assert problems == ["candidate wrote into input x (byte 22): an 'in' buffer must be "
                        "left as it was", "candidate wrote out of bounds before z[0] (byte -4 "
                        "relative to its start)"]


def test_device_output_cache_checksums_and_budget() -> None:
    a = np.arange(1000, dtype=np.float32)
    s = checksum_in_place(np, a, chunk=300)
    assert s == checksum_in_place(np, a.copy(), chunk=64)
    b = a.copy()
    b[[3, 4]] = b[[4, 3]]  # the same bytes in another order
    assert checksum_in_place(np, b) != s
    cache = DeviceOutputCache(max_bytes=10_000)
    assert cache.put(np, "k1", {"z": a.copy()})
    assert cache.get(np, "k1") is not None
    cache.entries["k1"][0]["z"][999] = -1.0  # a wild write reached the kept output
    assert cache.get(np, "k1") is None and cache.dropped_damaged == 1 and len(cache) == 0
    assert cache.put(np, "k1", {"z": a.copy()}) and cache.put(np, "k2", {"z": a.copy()})
    assert cache.put(np, "k3", {"z": a.copy()})  # 3 x 4000 bytes > 10000: k1 goes
    assert list(cache.entries) == ["k2", "k3"] and cache.bytes == 8000
    assert not cache.put(np, "big", {"z": np.zeros(5000, dtype=np.float32)})
