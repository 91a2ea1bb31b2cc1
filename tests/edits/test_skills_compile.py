"""Every skill, applied at once by a batch to every kernel the project ships (the lineages'
versions and the held-out set: real kernels with specs), leaves code that compiles (NVRTC,
no GPU needed). A skill whose guard lets through a rewrite that cannot compile (a variable
it never declares, a run that took a block's brace) fails here, naming the file and the
compiler's message."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from klc.batch import GATE_FAILED, REWRITTEN, BatchConfig, BatchOptions, run_batch

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def kernels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")  # the compile stage only, GPU or not
    src = tmp_path / "in"
    src.mkdir()
    for f in sorted((ROOT / "bench" / "heldout").glob("*.cu")):
        shutil.copy(f, src / f.name)
    for f in sorted((ROOT / "bench" / "lineages").glob("*/walk/*.cu")):
        shutil.copy(f, src / f"{f.parent.parent.name}_{f.name}")
    return src


def test_every_skill_at_once_leaves_every_shipped_kernel_compiling(kernels: Path,
                                                                   tmp_path: Path) -> None:
    config = BatchConfig.from_paths([str(ROOT / "skills")], gate=True, gate_stages=("compile",))
    summary = run_batch(config, BatchOptions([str(kernels)], mode="out",
                                             out_dir=str(tmp_path / "out"), jobs=2))
    failed = [f"{r.path}: {r.reason.splitlines()[0]}" for r in summary.results
              if r.status == GATE_FAILED]
    assert not failed, "\n".join(failed)
    rewritten = [r for r in summary.results if r.status == REWRITTEN]
    assert len(summary.results) > 100 and len(rewritten) > 100  # the skills did apply
