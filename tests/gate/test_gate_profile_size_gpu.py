"""Verify at the profiling size on a real GPU: two candidates that agree with their reference
at every verify size and go wrong only at the profiling size (half the rows from N = 4096 on;
an index product that wraps at 32 bits) are rejected; a correct kernel passes, and its
reference's outputs there are reused by the next trial (run on the device machine:
``python3 -m pytest -m gpu tests/gate/test_gate_profile_size_gpu.py``)."""

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
QUICK = Budget(warmup=1, target_s=0.02, max_runs=20, min_runs=5, check_runs=5)


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KLC_CACHE_DIR", str(tmp_path_factory.mktemp("klc-cache")))
        mp.delenv("KLC_GATE_ISOLATION", raising=False)
        worker_mod.pool().shutdown()
        yield
        worker_mod.pool().shutdown()


def run_gate(candidate: str, reference: str, **kw: object) -> GateRecord:
    c, r = DATA / candidate, DATA / reference
    return gate(read_source(c), str(c), reference=read_source(r), reference_path=str(r),
                budget=QUICK, **kw)  # type: ignore[arg-type]


def test_correct_kernel_checked_at_the_profiling_size_and_reference_reused() -> None:
    first = run_gate("row_scale.cu", "row_scale.cu")
    assert first.verdict == "passed", first.reason
    big = first.stages["verify"].data["profile_size"]
    assert big["label"].startswith("at the profiling size N=8192 C=512 seed=")
    assert big["inputs_made_on"] == "device"
    second = run_gate("row_scale.cu", "row_scale.cu")
    assert second.verdict == "passed", second.reason
    assert second.stages["verify"].data["profile_size"]["reference_outputs_reused"] is True
    assert "and at the profiling size N=8192 C=512" in second.stages["verify"].reason


def test_half_the_rows_at_large_n_is_rejected() -> None:
    rec = run_gate("row_scale_half_rows.cu", "row_scale.cu")
    assert rec.verdict == "failed"
    assert rec.stages["verify"].status == "failed"
    reason = rec.stages["verify"].reason
    assert "verify at the profiling size N=8192 C=512" in reason, reason
    assert f"candidate left out[{4096 * 512}] unwritten" in reason, reason
    assert rec.stages["profile"].status == "skipped"


def test_index_overflowing_32_bits_only_at_the_profiling_size_is_rejected() -> None:
    rec = run_gate("strided_gather_u32.cu", "strided_gather.cu")
    assert rec.verdict == "failed"
    reason = rec.stages["verify"].reason
    assert "verify at the profiling size n=16777216 m=65521" in reason, reason
    assert "candidate differs at out[1049345]" in reason, reason
