"""``segment_lanes``, ``segment_warps`` and ``block_of_warps`` (klc/guards/coarsen.py): a
segment of B elements split over a warp's 32 lanes in whole vectors, B as a count of warps, and,
for the simplification, a launched block of exactly W warps. Judged through the rules that use
them: the skill block_sum_to_warp_segments and the pass warp_segments_to_block_sum."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.rule import RuleSet

ROOT = Path(__file__).resolve().parents[2]
EXPERT = ROOT / "bench" / "lineages" / "block_sum_warps" / "expert.cu"
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
__global__ void k(const {t}* in, float* out, int n) {{
    __shared__ float sdata[PART];
    int tid = threadIdx.x;
    int i = blockIdx.x * PART + threadIdx.x;
    float sum = i < n ? in[i] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {{
        sum += __shfl_down_sync(0xffffffff, sum, o);
    }}
    if (tid % 32 == 0) {{
        sdata[tid / 32] = sum;
    }}
    __syncthreads();
    if (tid < 32) {{
        sum = tid < PART / 32 ? sdata[tid] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) {{
            sum += __shfl_down_sync(0xffffffff, sum, o);
        }}
    }}
    if (tid == 0) {{
        out[blockIdx.x] = sum;
    }}
}}
"""


def _rules(folder: str, name: str) -> list:
    return [r for r in RuleSet.load([str(ROOT / folder)]).rules if r.name == name]


def skill_sites(part: int, s: int, wpb: int = 4, t: str = "float",
                block: int | None = None):  # type: ignore[no-untyped-def]
    text = SPEC.format(part=part, block=block or part) + KERNEL.format(part=part, t=t)
    unit = parse_bytes(text.encode(), "k.cu")
    return find_sites(unit, _rules("skills", "block_sum_to_warp_segments"),
                      {"s": str(s), "wpb": str(wpb)}, spec_of(unit), clang=False)


@pytest.mark.parametrize(("part", "s"), [(128, 4), (256, 8), (512, 16), (1024, 32)])
def test_segments_of_whole_float4_lanes_and_their_warp_count_hold(part: int, s: int) -> None:
    (site,) = skill_sites(part, s)
    assert site.ok, site.reason


@pytest.mark.parametrize(("part", "s", "needle"), [
    (64, 4, "`PART` = 64 is not a multiple of 32 lanes x 4-element vectors (128)"),
    (256, 4, "`PART` = 256 is not 4 warps (128 threads)"),
    (256, 16, "`PART` = 256 is not 16 warps (512 threads)"),
])
def test_segments_the_lanes_or_the_launch_edits_cannot_split_are_refused(
        part: int, s: int, needle: str) -> None:
    (site,) = skill_sites(part, s)
    assert not site.ok and needle in site.reason, site.reason


def test_a_segment_that_is_not_whole_warps_is_refused_before_the_vectors() -> None:
    """48 elements: a warp and a half; the reason names the 32 lanes, not the vectors."""
    (site,) = skill_sites(48, 4)
    assert not site.ok and "`PART` = 48 is not a multiple of 32: a warp's 32 lanes" in \
        site.reason, site.reason


def test_a_block_that_is_not_the_segment_is_refused() -> None:
    """A block of 128 threads over a partition of 256 (two elements per thread elsewhere):
    whole_block_tree, the inverse's condition, refuses it."""
    (site,) = skill_sites(256, 8, block=128)
    assert not site.ok and "is not the block's x extent 128" in site.reason, site.reason


def test_an_input_that_is_not_float_is_refused() -> None:
    (site,) = skill_sites(256, 8, t="double")
    assert not site.ok and "double" in site.reason, site.reason


PASSES = [("warp_segments_to_block_sum", EXPERT),
          ("warp_tree_segments_to_block_tree", EXPERT.parents[1] / "block_sum_warps_tree" /
           "expert.cu")]


def _expert_with_block(expert: Path, block: str) -> bytes:
    src = read_source(expert)
    out = src.replace(b'block: ["32 * WARPS"]', f"block: [{block}]".encode())
    assert out != src
    return out


@pytest.mark.parametrize(("rule", "expert"), PASSES)
@pytest.mark.parametrize(("block", "needle"), [
    ("128", "block.x = 128 (the spec's block ['128']) is not `WARPS` = 8 warps"),
    ("\"32 * WARPS\", 2", "is not one-dimensional"),
])
def test_each_pass_needs_the_block_to_be_its_warps(rule: str, expert: Path, block: str,
                                                   needle: str) -> None:
    unit = parse_bytes(_expert_with_block(expert, block), str(expert))
    (site,) = find_sites(unit, _rules("passes", rule), {"wpb": "8", "s": "8"}, spec_of(unit),
                         clang=False)
    assert not site.ok and needle in site.reason, site.reason


def test_the_pass_holds_on_its_expert_at_the_walks_holes_only() -> None:
    unit = parse_bytes(read_source(EXPERT), str(EXPERT))
    rules = _rules("passes", "warp_segments_to_block_sum")
    (site,) = find_sites(unit, rules, {"wpb": "8", "s": "8"}, spec_of(unit), clang=False)
    assert site.ok, site.reason
    (site,) = find_sites(unit, rules, {"wpb": "4", "s": "8"}, spec_of(unit), clang=False)
    assert not site.ok and "and not 8 == 4" in site.reason, site.reason


def test_the_pass_refuses_a_kernel_whose_launch_it_cannot_see(tmp_path: Path) -> None:
    src = read_source(EXPERT)
    body = src[src.index(b"*/") + 2:]
    unit = parse_bytes(body, str(tmp_path / "k.cu"))
    out = apply_rules(unit, _rules("passes", "warp_segments_to_block_sum"), {"wpb": "8"}, None,
                      clang=False)
    assert not out.changed
    assert any("the block is not known exactly" in s.reason for s in out.refused)
