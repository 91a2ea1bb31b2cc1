"""The device script bench/composition.py over a few kernels of the transfer and regression
sets: every pair of the rules that apply and the whole library, each rewrite gated against
its original on the GPU."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is a folder of scripts, imported by this name
    sys.path.insert(0, str(ROOT))
from bench import composition as bc  # noqa: E402

LIBRARY = [str(ROOT / "skills"), str(ROOT / "passes")]


@pytest.mark.gpu
def test_composition_bench_verifies_a_subset_on_the_gpu(tmp_path: Path) -> None:
    """The device script over a few kernels: every rewrite verifies against its original."""
    kernels = tmp_path / "k"
    kernels.mkdir()
    for name in ("channel_mean_var.cu", "adam_update.cu", "softmax_block_row.cu"):
        for d in ("transfer", "heldout"):
            f = ROOT / "bench" / d / name
            if f.exists():
                (kernels / name).write_bytes(f.read_bytes())
    rc = bc.main(["--rules", *LIBRARY, "--kernels", str(kernels), "--out", str(tmp_path / "o"),
                  "--stages", "compile,verify", "--max-pairs", "4", "-j", "2",
                  "--gate-jobs", "2"])
    text = (tmp_path / "o" / "composition.md").read_text()
    assert rc == 0, text
    # cases, rewrites, distinct, static fails, verify fails, verified
    total = [int(v) for v in text.split("| **all** |")[1].split("\n")[0].split("|")[:6]]
    assert total[3] == total[4] == 0 and total[5] == total[2] >= 3, text
