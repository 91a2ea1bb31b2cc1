"""klc.reverse.learned_guards: a skill's guard narrowed to a fact every walk's expert had."""

from __future__ import annotations

from pathlib import Path

from klc.reverse import Observation, learned_guards, mechanical_inverse
from klc.rule import RuleSet, guard_text

ROOT = Path(__file__).resolve().parents[2]
PASSES = {r.name: r for r in RuleSet.load([str(ROOT / "passes"),
                                           str(ROOT / "passes" / "warp_sums")]).rules}


def _obs(block: list[int]) -> Observation:
    step = {"index": 1, "pass": "p", "sites": [], "holes": {},
            "facts_after": {"kernel": "k", "block": block, "grid": [64]}}
    return Observation({"family": "f", "versions": []}, Path("."), {"step": step},
                       {"file": "v00_expert.cu"})


def test_warp_code_learned_from_whole_warps_gets_a_block_of_whole_warps() -> None:
    inv = mechanical_inverse(PASSES["warp_xor_sum_to_shared"])  # writes __shfl_xor_sync
    got = learned_guards(inv, [_obs([256]), _obs([32, 4])])
    assert [guard_text(g) for g in got] == ["block_size_multiple(32)"]


def test_one_walk_without_the_fact_learns_nothing() -> None:
    inv = mechanical_inverse(PASSES["warp_xor_sum_to_shared"])
    assert learned_guards(inv, [_obs([256]), _obs([100])]) == []
    assert learned_guards(inv, [_obs([])]) == []  # the block was not known
    assert learned_guards(inv, []) == []


def test_code_without_warp_intrinsics_is_not_narrowed() -> None:
    inv = mechanical_inverse(PASSES["cg_block_sync_to_syncthreads"])  # writes block.sync()
    assert learned_guards(inv, [_obs([256])]) == []


def test_learn_reads_back_the_pass_folders_a_walk_recorded(tmp_path: Path) -> None:
    """A walk given two pass folders records both (os.pathsep-joined); klc learn loads them
    back and reverses the step of the second folder's pass, its guard narrowed."""
    import os

    from klc.lineage import walk, write_lineage
    from klc.reverse import learn

    kernel = tmp_path / "rows.cu"
    kernel.write_text(
        "/* klc-spec\nkernel: rows\nsizes: {n: 4096}\nargs:\n"
        "  - {name: x, shape: [n, 32], role: in}\n  - {name: y, shape: [n], role: out}\n"
        "grid: [\"n // 4\"]\nblock: [128]\n*/\n"
        "__global__ void rows(const float* x, float* y) {\n"
        "    const int r = blockIdx.x * 4 + threadIdx.x / 32;\n"
        "    float s = x[r * 32 + threadIdx.x % 32];\n"
        "    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);\n"
        "    if (threadIdx.x % 32 == 0) y[r] = s;\n}\n")
    folders = [ROOT / "passes", ROOT / "passes" / "warp_sums"]
    lin = walk(kernel, folders, stages=("compile",))
    assert lin.passes_dir == os.pathsep.join(str(f) for f in folders)
    out = tmp_path / "walk"
    write_lineage(lin, out)
    learned = {i.rule.name: i.rule for i in learn([out])}
    assert "warp_xor_sum" in learned
    assert "block_size_multiple(32)" in guard_text(learned["warp_xor_sum"].guard)
