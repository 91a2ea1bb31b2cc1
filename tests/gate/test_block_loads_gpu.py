"""Several loads per thread before a block's sum, both ways (skills/block_loads.rule,
passes/block_loads.rule).

Forward, ``one_element_to_thread_loads`` (a block sum by warp shuffles) and
``one_element_to_thread_loads_tree`` (the shared tree of sequential addressing) give each
thread ``?k`` elements of its block's partition on a block ``?k`` times smaller; the
partition (``blockIdx.x * B``) and the partial per block stay, the warp count or the tree's
bound and the launch's block follow the thread count. Here: the transfer kernel
bench/transfer/block_sum_partials.cu (the textbook interleaved tree) reaches both forms
through the skills a recipe chains (``interleaved_tree_to_sequential``, then the loads before
or after ``shared_tree_to_warp_shuffles``) at every ``?k`` of the domain, each result compiled
by NVRTC, its spec's block and host launch divided by ``?k`` and its partition unchanged; a
``?k`` that leaves half warps is refused with its reason. Backward, each pass on its expert
compiles with the spec's block multiplied back.

On a GPU (``python3 -m pytest -m gpu tests/gate/test_block_loads_gpu.py``) the gate verifies
every rewrite against the kernel it came from at the spec's sizes (ragged tails included), so
a rewrite whose loads miss or repeat an element of the partition fails; a stride of B / 2
where B / k is due is shown to fail the same check."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.pipeline import apply_rules, spec_of
from klc.rule import RuleSet

ROOT = Path(__file__).resolve().parents[2]
TRANSFER = ROOT / "bench" / "transfer" / "block_sum_partials.cu"
SHUFFLE = "one_element_to_thread_loads"
TREE = "one_element_to_thread_loads_tree"
GOLDEN_WITH_SPEC = [(SHUFFLE, "define_block_int_tid.cu"), (SHUFFLE, "block_sum_loads_v01.cu"),
                    (TREE, "define_block_int_tid.cu"), (TREE, "block_sum_loads_tree_v01.cu")]
EXPERTS = [("thread_loads_to_one_element", "block_sum_loads"),
           ("thread_loads_tree_to_one_element", "block_sum_loads_tree")]


def _rule(folder: str, name: str):  # type: ignore[no-untyped-def]
    return next(r for r in RuleSet.load([str(ROOT / folder)]).rules if r.name == name)


def _apply(source: bytes, path: str, folder: str, name: str,
           holes: dict[str, str] | None = None) -> bytes:
    unit = parse_bytes(source, path)
    out = apply_rules(unit, [_rule(folder, name)], holes or {}, spec_of(unit), clang=False)
    assert out.changed, [s.reason for s in out.refused]
    return out.source


def transfer_with_loads(k: int, shuffles_first: bool) -> bytes:
    """The transfer kernel given sequential addressing, then ?k loads per thread and warp
    shuffles in either order (both orders are what `klc optimize` may take)."""
    path = str(TRANSFER)
    out = _apply(read_source(TRANSFER), path, "skills", "interleaved_tree_to_sequential")
    if shuffles_first:
        out = _apply(out, path, "skills", "shared_tree_to_warp_shuffles")
        return _apply(out, path, "skills", SHUFFLE, {"k": str(k)})
    out = _apply(out, path, "skills", TREE, {"k": str(k)})
    if 256 // k >= 64:  # the shuffles' guard: a block of 64 .. 1024 threads
        out = _apply(out, path, "skills", "shared_tree_to_warp_shuffles")
    return out


CHAINS = [(k, first) for k in (2, 4, 8) for first in (True, False)]


def _compile(source: bytes, name: str) -> None:
    from klc.gate import gate

    rec = gate(source, name, stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason


@pytest.mark.parametrize(("k", "shuffles_first"), CHAINS)
def test_the_transfer_kernel_takes_k_loads_per_thread_and_compiles(
        k: int, shuffles_first: bool) -> None:
    text = transfer_with_loads(k, shuffles_first).decode()
    body = text[text.index("__global__"):text.index("int main")]
    # the partition and the partial per block stay; the thread count is 256 / k
    assert "unsigned int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;" in body
    assert "partial[blockIdx.x] = " in body
    assert f"j < {k}; j++" in body and f"i + j * (BLOCK_SIZE / {k})" in body
    if shuffles_first or 256 // k >= 64:  # the warp count of the shuffles' second stage
        assert f"tid < BLOCK_SIZE / {k} / 32 ? sdata[tid] : 0.0f" in body
    else:  # a tree over 32 threads
        assert f"s = BLOCK_SIZE / {k} / 2; s > 0" in body
    assert f'block: ["ceil_div(BLOCK_SIZE, {k})"]' in text
    assert f"block_sum<256><<<blocks, {256 // k}>>>" in text
    # BLOCK_SIZE left alone where it is the partition or the array; divided where it counts
    # threads: every other use reads BLOCK_SIZE / k
    assert "__shared__ float sdata[BLOCK_SIZE];" in body
    assert len(re.findall(r"BLOCK_SIZE(?! /)", body)) == 2  # the array, the partition
    _compile(text.encode(), f"block_sum_partials_k{k}:candidate")


def test_loads_that_leave_half_warps_are_refused() -> None:
    """At ?k = 8 a partition of 128 leaves 16 threads: the golden case's reason, through the
    library."""
    case = ROOT / "tests" / "golden" / TREE / "loads_not_whole_warps.cu"
    unit = parse_bytes(read_source(case), str(case))
    out = apply_rules(unit, [_rule("skills", TREE)], {"k": "8"}, spec_of(unit), clang=False)
    assert not out.changed
    assert any("16 threads are not whole warps" in s.reason for s in out.refused)


def test_a_k_that_does_not_divide_the_partition_is_refused(tmp_path: Path) -> None:
    """loads_split's first condition, on a partition of 96 (three warps) with a hole of 64
    loads: the reason names the division."""
    rule = tmp_path / "split.rule"
    rule.write_text('''rule split_probe {
  kind: skill
  description: "probe"
  context: global
  anchor: ```
    int $I = blockIdx.x * $B + threadIdx.x;
  ```
  metavar $I: identifier
  guard: loads_split($B, ?k)
  rewrite replace: ```
    int $I = blockIdx.x * $B + threadIdx.x;
  ```
  hole k: int in {2, 64} default 64
}
''')
    kernel = b"#define SPAN 96\n__global__ void k(float* o) {\n" \
             b"    int i = blockIdx.x * SPAN + threadIdx.x;\n    o[i] = 0.0f;\n}\n"
    unit = parse_bytes(kernel, str(tmp_path / "k.cu"))
    probe = RuleSet.load([str(rule)]).rules
    out = apply_rules(unit, probe, {"k": "64"}, None, clang=False)
    assert [s.reason for s in out.refused] and \
        "64 does not divide `SPAN` = 96" in out.refused[0].reason
    out = apply_rules(unit, probe, {"k": "2"}, None, clang=False)
    assert "`SPAN` / 2 = 48 threads are not whole warps" in out.refused[0].reason


@pytest.mark.parametrize(("rule", "family"), EXPERTS)
def test_each_pass_takes_its_expert_to_one_element_per_thread(rule: str, family: str) -> None:
    expert = ROOT / "bench" / "lineages" / family / "expert.cu"
    text = _apply(read_source(expert), str(expert), "passes", rule).decode()
    assert "LOADS; j++" not in text and "g_idata[i] : 0.0f" in text
    assert 'block: ["(BLOCK_SIZE / LOADS) * 4"]' in text
    _compile(text.encode(), f"{family}:simplified")


@pytest.mark.gpu
@pytest.mark.parametrize(("k", "shuffles_first"), CHAINS)
def test_on_a_gpu_the_transfer_kernel_with_k_loads_computes_the_same_partials(
        k: int, shuffles_first: bool) -> None:
    from klc.gate import gate

    rec = gate(transfer_with_loads(k, shuffles_first), f"block_sum_partials_k{k}:candidate",
               reference=read_source(TRANSFER), reference_path=str(TRANSFER),
               stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_on_a_gpu_loads_at_the_wrong_stride_fail_the_same_check() -> None:
    """The check above can fail: the loads strided by B / 2 on a block of B / 4 threads add
    elements twice and miss others, and the gate's verify says so."""
    from klc.gate import gate

    good = transfer_with_loads(4, True).decode()
    bad = good.replace("i + j * (BLOCK_SIZE / 4)", "i + j * (BLOCK_SIZE / 2)")
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
    rec = gate(_apply(read_source(original), str(original), "skills", rule),
               f"{name}:candidate", reference=read_source(original),
               reference_path=str(original), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize(("rule", "family"), EXPERTS)
def test_on_a_gpu_each_pass_is_sound_on_its_expert(rule: str, family: str) -> None:
    from klc.gate import gate

    expert = ROOT / "bench" / "lineages" / family / "expert.cu"
    rec = gate(_apply(read_source(expert), str(expert), "passes", rule), f"{family}:simplified",
               reference=read_source(expert), reference_path=str(expert),
               stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.parametrize("family", ["block_sum_loads", "block_sum_loads_tree"])
def test_the_lineages_recipe_replays_on_the_transfer_kernel_through_the_loads(
        family: str) -> None:
    """What `klc optimize` replays once a GPU has timed the walk: the committed recipe (the
    walk compiled only, so times stand in for the ones a timed walk records, each step
    faster) applied to block_sum_partials from its first applicable skill reaches the loads
    with the walk's block of 64 threads (?k = 4 at a partition of 256), in the walk's order
    after the tree's sequential addressing (and the shuffles)."""
    from dataclasses import replace

    from klc import recipes

    [recipe] = [r for r in recipes.load([ROOT / "skills"]) if r.family == family]
    names = [s.skill for s in recipe.steps]
    assert names[-1] == (SHUFFLE if family == "block_sum_loads" else TREE)
    assert names.index("interleaved_tree_to_sequential") < len(names) - 1
    n = len(recipe.steps)
    timed = replace(recipe, steps=[replace(s, before_us=300.0 - 40 * i,
                                           after_us=300.0 - 40 * (i + 1))
                                   for i, s in enumerate(recipe.steps)])
    rules = {r.name: r for r in RuleSet.load([str(ROOT / "skills")]).rules}
    got = recipes.replay(timed, read_source(TRANSFER), str(TRANSFER), rules)
    assert got is not None and got.end == n - 1, got
    text = got.source.decode()
    assert "j < 4; j++" in text and "i + j * (BLOCK_SIZE / 4)" in text
    assert "block_sum<256><<<blocks, 64>>>" in text
    assert ("__shfl_down_sync" in text) == (family == "block_sum_loads")
    _compile(got.source, f"block_sum_partials_{family}:replayed")
