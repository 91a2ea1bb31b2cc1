"""bfloat16 and float16 kernels end to end: an element-wise kernel (GELU) and a row reduction
(RMS norm), both bf16 in and out with float arithmetic, as mixed-precision training code writes
them, and an fp16 SiLU-and-multiply.
Without a GPU: they compile (cuda_bf16.h from the nvidia-cuda-runtime wheel), skills list on
them, `klc spec init` drafts bf16 buffers. On a GPU: each passes its own gate with the bf16
tolerance, a reordered float reduction passes against the original, an element scaled by the
wrong weight is rejected, and `klc optimize` gives a kernel that passes the gate against the
original."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import klc.gate.worker as worker_mod
from klc.cli import main
from klc.cuda.parse import parse_bytes, read_source
from klc.gate import gate
from klc.gate.profile import Budget
from klc.spec import find_spec_block, load_spec
from klc.spec_draft import draft_spec

ROOT = Path(__file__).resolve().parents[2]
BF16 = ROOT / "bench" / "bf16"
DATA = Path(__file__).resolve().parents[1] / "data" / "gate"
KERNELS = [BF16 / "gelu_bf16.cu", BF16 / "rms_norm_bf16.cu", BF16 / "silu_mul_fp16.cu"]
QUICK = Budget(warmup=1, target_s=0.02, max_runs=20, min_runs=5, check_runs=5)


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KLC_CACHE_DIR", str(tmp_path_factory.mktemp("klc-cache")))
        mp.delenv("KLC_GATE_ISOLATION", raising=False)
        yield
        worker_mod.pool().shutdown()


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.stem)
def test_compiles_and_lists(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = read_source(path)
    spec = load_spec(src, str(path))
    assert spec is not None
    rec = gate(src, str(path), stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason
    inc = rec.stages["compile"].data["include"]
    assert any(Path(d, "cuda_bf16.h").is_file() for d in inc)
    assert not any(d.startswith("/usr/local/cuda") for d in inc)
    assert main(["list", str(path)]) == 0
    assert "add_launch_bounds" in capsys.readouterr().out


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.stem)
def test_spec_init_drafts_bf16_buffers(path: Path) -> None:
    src = read_source(path)
    span = find_spec_block(src)
    assert span is not None
    bare = src[:span[0]] + src[span[1]:]
    d = draft_spec(parse_bytes(bare, str(path)))
    assert not d.todo
    spec = load_spec(d.text.encode() + bare, str(path))
    hand = load_spec(src, str(path))
    assert spec is not None and hand is not None
    assert [(a.name, a.role) for a in spec.args] == [(a.name, a.role) for a in hand.args]


def run_gate(path: Path, reference: Path | None = None) -> object:
    return gate(read_source(path), str(path),
                reference=read_source(reference) if reference else None,
                reference_path=str(reference) if reference else None, budget=QUICK)


@pytest.mark.gpu
@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.stem)
def test_gate_passes_itself_at_bf16_tolerance(path: Path) -> None:
    rec = run_gate(path)
    assert rec.verdict == "passed", rec.reason  # type: ignore[attr-defined]
    assert rec.stages["verify"].data["profile_size"]["label"]  # type: ignore[attr-defined]


@pytest.mark.gpu
def test_reordered_reduction_passes_wrong_weight_fails() -> None:
    ok = run_gate(DATA / "rms_norm_bf16_shfl.cu", BF16 / "rms_norm_bf16.cu")
    assert ok.verdict == "passed", ok.reason  # type: ignore[attr-defined]
    bad = run_gate(DATA / "rms_norm_bf16_next_weight.cu", BF16 / "rms_norm_bf16.cu")
    assert bad.verdict == "failed"  # type: ignore[attr-defined]
    assert "candidate differs at out[" in bad.reason  # type: ignore[attr-defined]
    assert "rtol 0.02, atol 0.01" in bad.reason  # type: ignore[attr-defined]


@pytest.mark.gpu
@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.stem)
def test_optimize_bf16(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
                       ) -> None:
    out = tmp_path / path.name
    rc = main(["optimize", str(path), "--budget", "6", "-o", str(out), "--json"])
    text = capsys.readouterr().out
    report = json.loads(text[text.index("{"):])
    assert rc in (0, 1), report
    assert report["baseline"]["verdict"] == "passed"
    if rc == 0:  # improved: the written kernel passes the gate against the original
        rec = run_gate(out, path)
        assert rec.verdict == "passed", rec.reason  # type: ignore[attr-defined]
