"""Walks of block reductions written in the spellings of public kernels take the structural
steps the lineages' own experts take (block_sum_shuffle: the shuffles -> the sequential
shared tree -> interleaved addressing; block_max_tree's tree for a maximum), with the
lane and warp read through their locals and the warp's shuffles through their helper
(klc.match.reading). Compile-only: each step is gated by NVRTC."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.lineage import walk

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
TREE = ["sequential_tree_to_interleaved", "remove_const_param"]


@pytest.mark.parametrize(("case", "steps"), [
    ("shuffle_lane_sums_to_shared_tree/lane_warp_helper.cu",
     ["shuffle_lane_sums_to_shared_tree", *TREE]),
    ("shuffle_lane_sums_to_shared_tree/lane_mask_and_shift.cu",
     ["index_shift_to_divide", "lane_mask_31_to_modulo", "shuffle_lane_sums_to_shared_tree",
      *TREE]),
    ("shuffle_warp_sums_to_shared_tree/lane_local_and_helper.cu",
     ["shuffle_warp_sums_to_shared_tree", *TREE]),
    ("shuffle_warp_max_to_shared_tree/absmax_lane_helper.cu",
     ["shuffle_warp_max_to_shared_tree", *TREE]),
])
def test_a_public_spelling_walks_as_the_experts_do(case: str, steps: list[str]) -> None:
    lin = walk(GOLDEN / case, ROOT / "passes", stages=("compile",))
    assert [v.step["pass"] for v in lin.versions[1:] if v.step] == steps
    assert lin.stop_reason == "no simplification applies"
