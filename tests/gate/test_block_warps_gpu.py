"""A warp per segment of a block sum's partition, both ways (skills/block_warps.rule,
passes/block_warps.rule).

Forward, ``block_sum_to_warp_segments`` takes a first reduction in its shuffle form (a block of
B threads per segment of B elements, one element per thread, the block's sum by warp
shuffles, one partial per block) to a warp per segment: ``?wpb`` segments per block of 32
``?wpb`` threads, the lanes reading the segment in float4 vectors, an xor-shuffle sum, the
block's partials staged in shared memory and stored together; ``block_tree_to_warp_segments``
takes the shared tree of sequential addressing to the same warps whose lanes' sums meet in a
per-warp shared tree (``__syncwarp``), lane 0 storing. The partial per segment stays;
the launch's block becomes 32 ``?wpb`` threads and its grid ``?wpb`` times smaller (rounded
up: the store's check skips the segments past n). Here: the transfer kernel
bench/transfer/block_sum_partials.cu (the textbook interleaved tree) reaches that form through
the skills a recipe chains (``interleaved_tree_to_sequential``, ``shared_tree_to_warp_shuffles``,
then the warps; or the tree's warps right after the first) at ``?wpb`` = 4 and 8, each
result compiled by NVRTC, its spec's grid and block and its host launch checked by value.
Backward, each pass on its expert compiles with a block per segment, and both compile-only
walks end at the textbook kernel.

On a GPU (``python3 -m pytest -m gpu tests/gate/test_block_warps_gpu.py``) the gate verifies
every rewrite against the kernel it came from at the spec's sizes (ragged tails included), so
a rewrite that sums the wrong elements or drops a segment fails; a segment stride of B / 2
where B is due is shown to fail the same check."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.rule import RuleSet
from klc.spec.expr import evaluate_int

ROOT = Path(__file__).resolve().parents[2]
TRANSFER = ROOT / "bench" / "transfer" / "block_sum_partials.cu"
SKILL = "block_sum_to_warp_segments"
TREE = "block_tree_to_warp_segments"
PASS = "warp_segments_to_block_sum"
GOLDEN_WITH_SPEC = [(SKILL, "block_sum_warps_v01.cu"), (SKILL, "define_block_int_tid.cu"),
                    (SKILL, "literal_256.cu"), (TREE, "block_sum_warps_tree_v01.cu"),
                    (TREE, "define_block_int_tid.cu"), (TREE, "literal_256.cu")]
EXPERTS = [(PASS, "block_sum_warps"), ("warp_tree_segments_to_block_tree", "block_sum_warps_tree")]


def _rule(folder: str, name: str):  # type: ignore[no-untyped-def]
    return next(r for r in RuleSet.load([str(ROOT / folder)]).rules if r.name == name)


def _apply(source: bytes, path: str, folder: str, name: str,
           holes: dict[str, str] | None = None) -> bytes:
    unit = parse_bytes(source, path)
    out = apply_rules(unit, [_rule(folder, name)], holes or {}, spec_of(unit), clang=False)
    assert out.changed, [s.reason for s in out.refused]
    return out.source


def transfer_shuffles() -> bytes:
    """The transfer kernel given sequential addressing, then the block's sum by warp shuffles:
    the shape the warp-per-segment skill reads."""
    path = str(TRANSFER)
    out = _apply(read_source(TRANSFER), path, "skills", "interleaved_tree_to_sequential")
    return _apply(out, path, "skills", "shared_tree_to_warp_shuffles")


def transfer_with_warps(wpb: int, tree: bool = False) -> bytes:
    """The transfer kernel with a warp per segment: from its shuffle form (xor shuffles, the
    partials staged), or, ``tree``, from its sequential tree (a per-warp shared tree)."""
    holes = {"wpb": str(wpb), "s": "8"}
    if tree:
        out = _apply(read_source(TRANSFER), str(TRANSFER), "skills",
                     "interleaved_tree_to_sequential")
        return _apply(out, str(TRANSFER), "skills", TREE, holes)
    return _apply(transfer_shuffles(), str(TRANSFER), "skills", SKILL, holes)


def _segments(n: int) -> int:
    return -(-n // 256)


def _launch(source: bytes, n: int) -> tuple[int, int]:
    """The spec's grid.x and block.x at size n."""
    spec = spec_of(parse_bytes(source, "k.cu"))
    assert spec is not None
    env = spec.env({"n": n})
    return evaluate_int(spec.grid[0], env), evaluate_int(spec.block[0], env)


def _compile(source: bytes, name: str) -> None:
    from klc.gate import gate

    rec = gate(source, name, stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason


@pytest.mark.parametrize("wpb", [4, 8])
def test_the_transfer_kernel_takes_a_warp_per_segment_and_compiles(wpb: int) -> None:
    text = transfer_with_warps(wpb).decode()
    body = text[text.index("__global__"):text.index("int main")]
    # the segment of warp tid / 32 of block b is b * wpb + tid / 32, still BLOCK_SIZE long
    assert f"unsigned int i = (blockIdx.x * {wpb} + tid / 32) * BLOCK_SIZE;" in body
    assert "reinterpret_cast<const float4*>(in + i)[j]" in body
    assert "j < BLOCK_SIZE / 4; j += 32" in body and "j < BLOCK_SIZE; j += 32" in body
    assert "__shfl_xor_sync(0xffffffff, sum, s)" in body and "__shfl_down_sync" not in body
    assert f"__shared__ float sdata[{wpb}];" in body
    assert f"if (tid < {wpb} && (blockIdx.x * {wpb} + tid) * BLOCK_SIZE < n)" in body
    assert f"partial[blockIdx.x * {wpb} + tid] = sdata[tid];" in body
    # the grid: one block per wpb segments, rounded up; the block: wpb warps
    for n in (1 << 26, 1000003, 37):
        segments = -(-n // 256)
        assert _launch(text.encode(), n) == (-(-segments // wpb), 32 * wpb)
    # the host launch: the grid divided by wpb rounding up, the block 32 wpb
    launch = re.search(r"block_sum<256><<<(.*), (\d+)>>>\(d_in, d_partial, n\);", text)
    assert launch is not None and launch.group(2) == str(32 * wpb)
    assert f"(klc_dims.x + {wpb - 1}u) / {wpb}u" in launch.group(1)
    _compile(text.encode(), f"block_sum_partials_wpb{wpb}:candidate")


@pytest.mark.parametrize("wpb", [4, 8])
def test_the_transfer_kernels_sequential_tree_takes_a_warp_per_segment_and_compiles(
        wpb: int) -> None:
    text = transfer_with_warps(wpb, tree=True).decode()
    body = text[text.index("__global__"):text.index("int main")]
    assert f"unsigned int i = (blockIdx.x * {wpb} + tid / 32) * BLOCK_SIZE;" in body
    assert f"__shared__ float sdata[32 * {wpb}];" in body
    assert "sdata[tid] = sum;\n    __syncwarp();" in body and "__syncthreads" not in body
    assert "if (tid % 32 < s)" in body
    assert f"partial[blockIdx.x * {wpb} + tid / 32] = sdata[tid];" in body
    for n in (1 << 26, 1000003, 37):
        assert _launch(text.encode(), n) == (-(-_segments(n) // wpb), 32 * wpb)
    assert re.search(rf"block_sum<256><<<.*\(klc_dims.x \+ {wpb - 1}u\) / {wpb}u.*, "
                     rf"{32 * wpb}>>>", text)
    _compile(text.encode(), f"block_sum_partials_tree_wpb{wpb}:candidate")


def test_klc_list_shows_the_skill_on_the_shuffle_form_not_on_the_tree() -> None:
    """The skill reads the shuffle form: on the transfer kernel as written (the interleaved
    tree) it finds no site; after the two skills optimize takes first it does, and its guard
    holds at the walk's holes."""
    rules = [_rule("skills", SKILL)]
    plain = parse_bytes(read_source(TRANSFER), str(TRANSFER))
    assert find_sites(plain, rules, {"wpb": "8", "s": "8"}, spec_of(plain), clang=False) == []
    unit = parse_bytes(transfer_shuffles(), str(TRANSFER))
    sites = find_sites(unit, rules, {"wpb": "8", "s": "8"}, spec_of(unit), clang=False)
    assert [s.ok for s in sites] == [True]


def test_a_warp_count_that_is_not_the_segment_is_refused() -> None:
    """?s names the segment's warps (256 = 8 warps): any other value is refused, the reason
    naming the warps, so the launch edits (block.x *= ?wpb, /= ?s) stay exact."""
    unit = parse_bytes(transfer_shuffles(), str(TRANSFER))
    out = apply_rules(unit, [_rule("skills", SKILL)], {"wpb": "4", "s": "4"}, spec_of(unit),
                      clang=False)
    assert not out.changed
    assert any("= 256 is not 4 warps (128 threads)" in s.reason for s in out.refused)


@pytest.mark.parametrize(("rule", "family"), EXPERTS)
def test_each_pass_takes_its_expert_to_a_block_per_segment(rule: str, family: str) -> None:
    expert = ROOT / "bench" / "lineages" / family / "expert.cu"
    text = _apply(read_source(expert), str(expert), "passes", rule).decode()
    code = text[text.index("__global__"):]
    assert "float4" not in code and "__shfl_xor_sync" not in code and "__syncwarp" not in code
    assert "unsigned int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;" in code
    assert "__shared__ float sdata[BLOCK_SIZE];" in code
    assert ("g_odata[blockIdx.x] = sum;" in code) == (family == "block_sum_warps")
    assert ("g_odata[blockIdx.x] = sdata[0];" in code) == (family == "block_sum_warps_tree")
    # the grid is one block per segment again, exactly (no block past the last segment)
    assert 'grid: ["ceil_div(n, BLOCK_SIZE)"]' in text
    for n in (1 << 26, 1000003, 37):
        assert _launch(text.encode(), n) == (-(-n // 256), 256)
    _compile(text.encode(), f"{family}:simplified")


@pytest.mark.parametrize(("family", "passes", "twin"), [
    ("block_sum_warps", [PASS, "shuffle_warp_sums_to_shared_tree",
                         "sequential_tree_to_interleaved", "remove_const_param"],
     "block_sum_loads"),
    ("block_sum_warps_tree", ["warp_tree_segments_to_block_tree",
                              "sequential_tree_to_interleaved", "remove_const_param"],
     "block_sum_loads_tree"),
])
def test_the_compile_only_walk_ends_at_the_textbook_kernel(family: str, passes: list[str],
                                                           twin: str) -> None:
    """The committed walk: the pass first, then the block sum's own passes; its naive end is
    the first reduction of interleaved addressing, the body of the loads lineage's naive end
    from the same block form (the shape of the transfer kernel)."""
    walk = ROOT / "bench" / "lineages" / family / "walk"
    record = json.loads((walk / "lineage.json").read_text())
    assert [v["pass"] for v in record["versions"][1:]] == passes
    files = [v["file"] for v in record["versions"]]

    def body(path: Path) -> str:
        text = path.read_text()
        return text[text.index("{", text.index("__global__")):]

    twin_walk = ROOT / "bench" / "lineages" / twin / "walk"
    other = sorted(twin_walk.glob("v*_remove_const_param.cu"))[-1]
    end = body(walk / files[-1]).replace(family, twin)
    assert end == body(other)
    assert "tid % (2 * " in end


@pytest.mark.gpu
@pytest.mark.parametrize("wpb", [4, 8])
@pytest.mark.parametrize("tree", [False, True])
def test_on_a_gpu_the_transfer_kernel_with_a_warp_per_segment_computes_the_same_partials(
        wpb: int, tree: bool) -> None:
    from klc.gate import gate

    rec = gate(transfer_with_warps(wpb, tree), f"block_sum_partials_wpb{wpb}:candidate",
               reference=read_source(TRANSFER), reference_path=str(TRANSFER),
               stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("tree", [False, True])
def test_on_a_gpu_a_wrong_segment_stride_fails_the_same_check(tree: bool) -> None:
    """The check above can fail: warps whose segments start B / 2 apart sum overlapping
    halves and miss the rest, and the gate's verify says so."""
    from klc.gate import gate

    good = transfer_with_warps(8, tree).decode()
    bad = good.replace("(blockIdx.x * 8 + tid / 32) * BLOCK_SIZE;",
                       "(blockIdx.x * 8 + tid / 32) * (BLOCK_SIZE / 2);")
    assert bad != good
    rec = gate(bad.encode(), "block_sum_partials_wrong_stride:candidate",
               reference=read_source(TRANSFER), reference_path=str(TRANSFER),
               stages=("compile", "verify"))
    assert rec.verdict != "passed"


@pytest.mark.gpu
@pytest.mark.parametrize(("rule", "name"), GOLDEN_WITH_SPEC)
def test_on_a_gpu_each_golden_rewrite_matches_its_original(rule: str, name: str) -> None:
    from klc.gate import gate

    original = ROOT / "tests" / "golden" / rule / name
    rec = gate(original.with_name(name.replace(".cu", ".expected.cu")).read_bytes(),
               f"{name}:candidate", reference=read_source(original),
               reference_path=str(original), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize(("rule", "family"), EXPERTS)
def test_on_a_gpu_each_pass_is_sound_on_its_expert(rule: str, family: str) -> None:
    from klc.gate import gate

    expert = ROOT / "bench" / "lineages" / family / "expert.cu"
    rec = gate(_apply(read_source(expert), str(expert), "passes", rule),
               f"{family}:simplified", reference=read_source(expert),
               reference_path=str(expert), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason
