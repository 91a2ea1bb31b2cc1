"""Lineage recipes: learned in forward order, replayed by the optimizer as one move."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from klc.errors import KlcError
from klc.gate import GateRecord, StageResult, gate
from klc.optimize import OptimizeOptions, optimize
from klc.recipes import RECIPES_FILE, build, line_shape, load, replay, to_yaml
from klc.reverse import learn
from klc.rule import RuleSet

ROOT = Path(__file__).resolve().parents[2]
SKILLS = ROOT / "skills"
NAIVE_SGEMM = ROOT / "bench/lineages/sgemm/walk/v38_register_tile_1x1_to_scalar.cu"


def rules() -> dict[str, Any]:
    return {r.name: r for r in list(RuleSet.load([str(SKILLS)]).rules)}


def recipe(family: str) -> Any:
    return next(r for r in load([SKILLS]) if r.family == family)


def test_committed_recipes_are_what_learn_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    dirs = sorted(Path("bench/lineages").glob("*/walk"))
    text = to_yaml(build(learn(dirs, "passes")))
    assert (SKILLS / RECIPES_FILE).read_text() == text
    sgemm = next(r for r in build(learn(dirs, "passes")) if r.family == "sgemm")
    # forward order: the walk's last step first, its first step last
    assert sgemm.steps[0].skill == "scalar_to_register_tile"
    assert sgemm.steps[-1].skill == "add_launch_bounds"
    assert all(a.after_us == b.before_us for a, b in itertools.pairwise(sgemm.steps))


def test_sgemm_recipe_crosses_the_slower_steps_to_a_tiled_kernel() -> None:
    src = NAIVE_SGEMM.read_bytes()
    rp = replay(recipe("sgemm"), src, str(NAIVE_SGEMM), rules())
    assert rp is not None
    # it passes split_k_loop and register_fragments, each slower on its own, and stops at
    # the fastest version its walk measured (the one before double buffering)
    names = [s.skill for s in rp.recipe.steps[rp.start:rp.end + 1]]
    assert "split_k_loop" in names and "register_fragments" in names
    assert rp.recipe.steps[rp.end].skill == "register_prefetch"
    assert rp.gain > 5
    out = rp.source.decode()
    assert "__shared__" in out and "float4" in out and "acc[i][j] += a_frag[i] * b_frag[j]" in out
    rec = gate(rp.source, str(NAIVE_SGEMM), stages=("compile",))
    assert rec.verdict == "passed", rec.reason


def test_a_replay_takes_the_site_its_walk_took() -> None:
    """The stencil_rows_corner walk unrolled the two loops over a thread's rows, not the
    window's 7-trip loops inside them (the tighter matches of add_bare_pragma_unroll's
    anchor): each recipe step names the first line of its site, and the replay of the walk's
    naive end gives back the expert, unroll for unroll."""
    walk = ROOT / "bench/lineages/stencil_rows_corner/walk"
    naive = walk / "v09_remove_const_param.cu"
    steps = recipe("stencil_rows_corner").steps
    assert [s.site for s in steps if s.skill == "add_bare_pragma_unroll"] == [
        "for (int rr = 0; rr < 4; rr++) {"] * 2
    rp = replay(recipe("stencil_rows_corner"), naive.read_bytes(), str(naive), rules())
    assert rp is not None and rp.recipe.steps[rp.end].skill == "add_bare_pragma_unroll"
    assert rp.source == (walk / "v00_expert.cu").read_bytes()


def test_a_site_of_the_same_shape_stands_for_the_walks() -> None:
    """Another kernel spells the walk's rows loop `rr < 4` where the expert had `rr < ROWS`:
    the same shape, so the replay unrolls it, not the window loops inside it; and a replay
    does not start at a step whose site has no line of that shape (the stencil_rows_vec4
    recipe on the kernel the stencil_rows recipe leaves starts at its row sums, not by
    unrolling the window loops the stencil_rows walk never unrolled)."""
    assert line_shape("for (int rr = 0; rr < ROWS; rr++) {") == line_shape(
        "for (int i = 0; i < 8; i++) {")
    assert line_shape("for (int rr = 0; rr < 4; rr++) {") != line_shape(
        "for (int dv = -1; dv <= 1; dv++) {")
    assert line_shape("if (y >= H) return;") != line_shape("if (y >= H) break;")
    blur = ROOT / "bench/transfer/blur_3x3.cu"
    # on a kernel already qualified, the first structural step is where the replay starts
    # (its site, `y = blockIdx.y ...`, is recorded inside the line `int y = ...` of a match
    # that starts at `int x = ...`)
    qualified = blur.read_bytes().replace(b"(const float* img, float* out,",
                                          b"(const float* __restrict__ img, "
                                          b"float* __restrict__ out,")
    first = replay(recipe("stencil_rows"), qualified, str(blur), rules())
    assert first is not None
    assert first.recipe.steps[first.start].skill == "stencil_rows_per_thread"
    rows = replay(recipe("stencil_rows"), blur.read_bytes(), str(blur), rules())
    assert rows is not None  # (its fastest version: the interior rows, not yet unrolled)
    assert b"#pragma unroll" not in rows.source
    vec4 = recipe("stencil_rows_vec4")
    for i, s in enumerate(vec4.steps):  # (the committed walk is compile-only: no times)
        s.before_us, s.after_us = 100.0 * 0.8 ** i, 100.0 * 0.8 ** (i + 1)
    more = replay(vec4, rows.source, str(blur), rules())
    assert more is not None and vec4.steps[more.start].skill == "add_bare_pragma_unroll"
    assert vec4.steps[more.end].skill == "stencil_columns_vec4" and b"float4" in more.source
    # with the rows loops unrolled already, it starts at the row sums: the window loops
    # that the first unroll step could take are no line of the walk's shape
    unrolled = more.source.decode()
    assert "#pragma unroll\n            for (int dv" not in unrolled
    theirs = rows.source.replace(b"        for (int rr",
                                 b"        #pragma unroll\n        for (int rr")
    again = replay(vec4, theirs, str(blur), rules())
    assert again is not None and vec4.steps[again.start].skill == "windows_to_row_sums"
    assert again.source == more.source


def test_a_recipe_that_does_not_apply_gives_nothing() -> None:
    src = (ROOT / "bench/heldout/vector_add.cu").read_bytes()
    assert replay(recipe("sgemm"), src, "vector_add.cu", rules()) is None


class TiledIsFaster:
    """A scripted gate: 25 ms, or 4 ms once the kernel has a shared-memory tile."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, candidate: bytes, path: str, *, reference: bytes | None = None,
                 reference_path: str | None = None, arch: str | None = None,
                 stages: Iterable[str] = (), seeds: Iterable[int] | None = None,
                 timeout_s: float | None = None) -> GateRecord:
        self.calls += 1

        def ms(src: bytes) -> float:
            return 4.0 if b"__shared__" in src else 25.0

        st = {"compile": StageResult("passed", "compiled", {}),
              "verify": StageResult("passed", "agree", {"seeds": list(seeds or [1, 2, 3])})}
        data: dict[str, Any] = {"median_ms": ms(candidate), "noise": 0.002,
                                "sol": {"pct_of_sol": 100 * 2.0 / ms(candidate),
                                        "bound": "compute"}}
        if reference is not None:
            data["speedup"] = ms(reference) / ms(candidate)
        st["profile"] = StageResult("passed", "timed", data)
        rec = GateRecord(path, "sgemm", hashlib.sha256(candidate).hexdigest(), reference_path,
                         None, arch or "sm_90", (), "Scripted GPU", st)
        rec.verdict, rec.reason = "passed", "all stages passed"
        return rec


def test_optimize_keeps_a_recipe_as_one_step(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))
    g = TiledIsFaster()
    res = optimize(NAIVE_SGEMM.read_bytes(), str(NAIVE_SGEMM), OptimizeOptions(
        gpu=True, gate_fn=g, arch="sm_90", use_cache=False, budget=4,
        skills=list(rules().values())))
    assert res.steps and res.steps[0].kind == "recipe"
    assert res.steps[0].skill.startswith("lineage sgemm: ")
    assert res.changed and b"__shared__" in res.source
    # without recipes the single skills cannot cross the valley within the budget
    g2 = TiledIsFaster()
    res2 = optimize(NAIVE_SGEMM.read_bytes(), str(NAIVE_SGEMM), OptimizeOptions(
        gpu=True, gate_fn=g2, arch="sm_90", use_cache=False, budget=4, recipes=[],
        skills=list(rules().values())))
    assert not any(s.kind == "recipe" for s in res2.steps)
    assert not res2.changed


def test_a_broken_recipes_file_is_refused_with_its_path(tmp_path: Path) -> None:
    (tmp_path / RECIPES_FILE).write_text("- family: x\n  steps: 3\n")
    with pytest.raises(KlcError, match=str(tmp_path / RECIPES_FILE)):
        load([tmp_path])
    (tmp_path / RECIPES_FILE).write_text("{{{")
    with pytest.raises(KlcError, match="not a recipes file"):
        load([tmp_path])


NAIVE_GEMV = ROOT / "bench/lineages/gemv_bias_rows/walk/v09_remove_const_param.cu"


class RowGate(TiledIsFaster):
    """A scripted gate for a thread-per-row GEMV: 10 ms; block per row (shuffles and a
    __shared__ array) ``block_ms``; warp per row (shuffles, no __shared__) ``warp_ms``."""

    def __init__(self, block_ms: float, warp_ms: float) -> None:
        super().__init__()
        self.block_ms, self.warp_ms = block_ms, warp_ms

    def __call__(self, candidate: bytes, path: str, **kw: Any) -> GateRecord:
        def ms(src: bytes) -> float:
            if b"__shfl" not in src:
                return 10.0
            return self.block_ms if b"__shared__" in src else self.warp_ms

        rec = super().__call__(candidate, path, **kw)
        prof = rec.stages["profile"].data
        prof["median_ms"] = ms(candidate)
        prof["sol"]["pct_of_sol"] = 100 * 0.2 / ms(candidate)
        ref = kw.get("reference")
        if ref is not None:
            prof["speedup"] = ms(ref) / ms(candidate)
        return rec


def _optimize_gemv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gate_fn: Any) -> Any:
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))
    return optimize(NAIVE_GEMV.read_bytes(), str(NAIVE_GEMV), OptimizeOptions(
        gpu=True, gate_fn=gate_fn, arch="sm_90", use_cache=False, budget=8,
        skills=list(rules().values())))


def test_a_round_move_faster_than_the_recipe_is_kept_instead(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the softmax_block_rows recipe (block per row) verifies at 5x, warp per row at 10x
    res = _optimize_gemv(tmp_path, monkeypatch, RowGate(block_ms=2.0, warp_ms=1.0))
    first = res.steps[0]
    assert first.kind == "improvement", [s.skill for s in res.steps]
    assert first.skill == "thread_per_row_to_warp_per_row"
    assert b"__shfl" in res.source and b"__shared__" not in res.source
    assert any("was kept over lineage softmax_block_rows" in n for n in res.notes), res.notes


def test_the_recipe_is_kept_when_no_round_move_beats_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # warp per row only as fast as block per row: the recipe stays
    res = _optimize_gemv(tmp_path, monkeypatch, RowGate(block_ms=2.0, warp_ms=2.0))
    first = res.steps[0]
    assert first.kind == "recipe" and first.skill.startswith("lineage softmax_block_rows"), \
        [s.skill for s in res.steps]
    assert b"__shared__" in res.source
    assert not any("was kept over" in n for n in res.notes)


NAIVE_ATTENTION = ROOT / "bench/lineages/attention_key_tile/walk/v08_remove_const_param.cu"


class AttentionGate(TiledIsFaster):
    """A scripted gate for a thread-per-query attention kernel: 10 ms; a block per row
    (__syncthreads) ``block_ms``; a warp's key tile (a [warps][32][dims] shared tile)
    ``tile_ms``; any other warp-per-row kernel 5 ms."""

    def __init__(self, block_ms: float, tile_ms: float) -> None:
        super().__init__()
        self.block_ms, self.tile_ms = block_ms, tile_ms
        self.gated: list[bytes] = []

    def __call__(self, candidate: bytes, path: str, **kw: Any) -> GateRecord:
        def ms(src: bytes) -> float:
            if b"__shared__" in src and b"][32][" in src:
                return self.tile_ms
            if b"__syncthreads" in src:
                return self.block_ms
            return 5.0 if b"__shfl" in src else 10.0

        self.gated.append(candidate)
        rec = super().__call__(candidate, path, **kw)
        prof = rec.stages["profile"].data
        prof["median_ms"] = ms(candidate)
        prof["sol"]["pct_of_sol"] = 100 * 0.1 / ms(candidate)
        ref = kw.get("reference")
        if ref is not None:
            prof["speedup"] = ms(ref) / ms(candidate)
        return rec


def _optimize_attention(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gate_fn: Any,
                        budget: int = 8) -> Any:
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))
    return optimize(NAIVE_ATTENTION.read_bytes(), str(NAIVE_ATTENTION), OptimizeOptions(
        gpu=True, gate_fn=gate_fn, arch="sm_90", use_cache=False, budget=budget,
        skills=list(rules().values())))


def test_the_recipe_that_takes_most_of_its_expert_is_gated_beside_the_largest_gain(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On the naive end of the key-tile lineage, the block-per-row recipe (42x on its own
    softmax) outranks the key-tile recipe (7.7x) by the walks' gains; the key-tile recipe
    takes two structural steps of its expert. Both are gated, the key tile (faster here)
    is kept, and the note says which was faster."""
    g = AttentionGate(block_ms=2.0, tile_ms=1.0)
    res = _optimize_attention(tmp_path, monkeypatch, g)
    first = res.steps[0]
    assert first.kind == "recipe" and first.skill.startswith("lineage attention_key_tile"), \
        [s.skill for s in res.steps]
    assert b"][32][" in res.source and b"__syncthreads" not in res.source
    assert any(b"__syncthreads" in c for c in g.gated)  # the block-per-row kernel was tried
    assert any("two recipes gated: lineage attention_key_tile" in n
               and "is faster than lineage softmax_block_rows" in n for n in res.notes), \
        res.notes


def test_the_larger_gain_is_kept_when_the_gate_finds_it_faster(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    g = AttentionGate(block_ms=1.0, tile_ms=2.0)
    res = _optimize_attention(tmp_path, monkeypatch, g)
    first = res.steps[0]
    assert first.kind == "recipe" and first.skill.startswith("lineage softmax_block_rows"), \
        [s.skill for s in res.steps]
    assert any("two recipes gated: lineage softmax_block_rows" in n for n in res.notes), \
        res.notes


def test_a_budget_of_one_trial_gates_only_the_deepest_recipe(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a budget of 2: the original's timing and one trial
    g = AttentionGate(block_ms=1.0, tile_ms=2.0)
    res = _optimize_attention(tmp_path, monkeypatch, g, budget=2)
    assert res.trials_used == 2
    assert not any(b"__syncthreads" in c for c in g.gated)
    assert res.steps and res.steps[0].skill.startswith("lineage attention_key_tile")
    assert not any("two recipes gated" in n for n in res.notes)
