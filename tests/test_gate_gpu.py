"""The gate on a real GPU: a correct rewrite passes; six kinds of bad candidate are each
rejected with the right reason, and the gate goes on after each (run on the device machine:
``python3 -m pytest -m gpu tests/test_gate_gpu.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from klc.frontend import read_source
from klc.gate import GateRecord, gate

pytestmark = pytest.mark.gpu

DATA = Path(__file__).parent / "data" / "gate"
EXAMPLES = Path(__file__).parent.parent / "bench" / "examples"
AXPY = DATA / "axpy.cu"


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A fresh cache, so that compiling and the device figures are exercised, not reused."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KLC_CACHE_DIR", str(tmp_path_factory.mktemp("klc-cache")))
        yield


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
    assert prof["series"]["candidate"]["runs"] >= 20
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
