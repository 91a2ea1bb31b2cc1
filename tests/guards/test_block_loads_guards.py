"""``loads_split`` and ``block_times_loads`` (klc/guards/coarsen.py): a block's partition of
B elements split into k loads per thread on whole warps, and, for the simplification, a
launched block that k of make the partition. Judged through the rules that use them: the
skill one_element_to_thread_loads_tree and the pass thread_loads_tree_to_one_element."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.pipeline import find_sites, spec_of
from klc.rule import RuleSet

ROOT = Path(__file__).resolve().parents[2]
EXPERT = ROOT / "bench" / "lineages" / "block_sum_loads_tree" / "expert.cu"
SPEC = """/* klc-spec
kernel: k
sizes: {{n: 1048576}}
args:
  - {{name: in, shape: [n], role: in}}
  - {{name: out, shape: ["ceil_div(n, {part})"], role: out}}
  - {{name: n, value: n}}
grid: ["ceil_div(n, {part})"]
block: [{block}]
*/
"""
KERNEL = """#define PART {part}
__global__ void k(const float* in, float* out, int n) {{
    __shared__ float sdata[PART];
    int tid = threadIdx.x;
    int i = blockIdx.x * {b} + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (int s = {b} / 2; s > 0; s >>= 1) {{
        if (tid < s) {{
            sdata[tid] += sdata[tid + s];
        }}
        __syncthreads();
    }}
    if (tid == 0) {{
        out[blockIdx.x] = sdata[0];
    }}
}}
"""


def _rules(folder: str, name: str) -> list:
    return [r for r in RuleSet.load([str(ROOT / folder)]).rules if r.name == name]


def skill_site(part: int, k: str, b: str = "PART", block: str | None = None):  # type: ignore[no-untyped-def]
    text = SPEC.format(part=part, block=block or part) + KERNEL.format(part=part, b=b)
    unit = parse_bytes(text.encode(), "k.cu")
    (s,) = find_sites(unit, _rules("skills", "one_element_to_thread_loads_tree"), {"k": k},
                      spec_of(unit), clang=False)
    return s


@pytest.mark.parametrize(("part", "k"), [(256, "2"), (256, "4"), (256, "8"), (1024, "8"),
                                         (64, "2")])
def test_whole_warps_of_loads_hold(part: int, k: str) -> None:
    s = skill_site(part, k)
    assert s.ok, s.reason


@pytest.mark.parametrize(("part", "k", "why"), [
    (64, "4", "`PART` / 4 = 16 threads are not whole warps"),
    (128, "8", "`PART` / 8 = 16 threads are not whole warps"),
])
def test_loads_that_leave_part_of_a_warp_are_refused(part: int, k: str, why: str) -> None:
    s = skill_site(part, k)
    assert not s.ok and why in s.reason


def test_a_partition_read_from_the_block_is_refused() -> None:
    """blockDim.x is the block: divided by the launch edit, it would move the partition."""
    s = skill_site(256, "4", b="blockDim.x")
    assert not s.ok and "`blockDim.x` = 256 reads the block's extent" in s.reason


def test_a_partition_that_is_not_the_block_is_refused() -> None:
    s = skill_site(256, "4", block="128")
    assert not s.ok and "is not the block's x extent 128" in s.reason


def pass_site(block: str):  # type: ignore[no-untyped-def]
    text = read_source(EXPERT).decode().replace('block: ["BLOCK_SIZE / LOADS"]',
                                                f"block: [{block}]")
    unit = parse_bytes(text.encode(), "expert.cu")
    (s,) = find_sites(unit, _rules("passes", "thread_loads_tree_to_one_element"), {},
                      spec_of(unit), clang=False)
    return s


def test_the_pass_holds_where_k_blocks_make_the_partition() -> None:
    s = pass_site('"BLOCK_SIZE / LOADS"')
    assert s.ok, s.reason
    assert pass_site("64").ok


@pytest.mark.parametrize(("block", "why"), [
    ("128", "block.x = 128 (the spec's block ['128']): 4 of it do not make `BLOCK_SIZE` = 256"),
    ("64, 2", "is not one-dimensional"),
])
def test_the_pass_refuses_a_block_that_is_not_the_partition_over_k(block: str,
                                                                  why: str) -> None:
    s = pass_site(block)
    assert not s.ok and why in s.reason
