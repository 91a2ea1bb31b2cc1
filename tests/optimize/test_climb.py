"""The coarsening climb (klc/optimize/climb.py): a grid-dividing hole tried one step of its
domain above the value that paid while the kernel has headroom, for a recipe (absmax_grid's
grid_stride_fold on the transfer set's absmax_reduce) and for a site's phase B
(grid_stride_loop_wide on a privatised byte histogram); scripted gates whose time follows
the grid the spec launches."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from klc.fill.shape import coarsening_holes, larger_value
from klc.gate import GateRecord, StageResult
from klc.optimize import OptimizeOptions, optimize
from klc.rule import RuleSet

ROOT = Path(__file__).resolve().parents[2]
ABSMAX = ROOT / "bench/transfer/absmax_reduce.cu"
HIST = ROOT / "tests/golden/grid_stride_loop_wide/byte_hist_size_t.cu"


def rules() -> dict[str, Any]:
    return {r.name: r for r in RuleSet.load([str(ROOT / "skills")]).rules}


def grid_factor(src: bytes) -> int:
    """How many times the spec's grid.x was divided: ``ceil_div(ceil_div(n, 512), 16)``
    is 16, the original ``ceil_div(n, 512)`` 1."""
    m = re.search(rb'^grid: \["([^"]*)"', src, re.M)
    assert m is not None
    k = 1
    for d in re.findall(rb",\s*(\d+)\)", m.group(1))[1:]:
        k *= int(d)
    return k


class ByFactor:
    """A scripted gate: the time of a version is ``ms(factor)`` of its grid's coarsening
    (the original 1), every version verifies; the SOL floor is ``floor_ms``."""

    def __init__(self, ms: Callable[[int], float], floor_ms: float = 0.5) -> None:
        self.ms, self.floor_ms = ms, floor_ms
        self.factors: list[int] = []

    def __call__(self, candidate: bytes, path: str, *, reference: bytes | None = None,
                 reference_path: str | None = None, arch: str | None = None,
                 stages: Iterable[str] = (), seeds: Iterable[int] | None = None,
                 timeout_s: float | None = None) -> GateRecord:
        k = grid_factor(candidate)
        self.factors.append(k)
        t = self.ms(k)
        st = {"compile": StageResult("passed", "compiled", {}),
              "verify": StageResult("passed", "agree", {"seeds": list(seeds or [1, 2, 3])})}
        data: dict[str, Any] = {"median_ms": t, "noise": 0.002,
                                "sol": {"pct_of_sol": 100 * self.floor_ms / t,
                                        "bound": "memory"}}
        if reference is not None:
            data["speedup"] = self.ms(grid_factor(reference)) / t
        st["profile"] = StageResult("passed", "timed", data)
        rec = GateRecord(path, "k", hashlib.sha256(candidate).hexdigest(), reference_path,
                         None, arch or "sm_90", (), "Scripted GPU", st)
        rec.verdict, rec.reason = "passed", "all stages passed"
        return rec


def _run(path: Path, gate_fn: ByFactor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         skills: list[Any], budget: int, recipes: list[Any] | None = None) -> Any:
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))
    kw: dict[str, Any] = {} if recipes is None else {"recipes": recipes}
    return optimize(path.read_bytes(), str(path), OptimizeOptions(
        gpu=True, gate_fn=gate_fn, arch="sm_90", use_cache=False, budget=budget,
        skills=skills, **kw))


def test_coarsening_holes_and_the_next_value() -> None:
    lib = rules()
    assert coarsening_holes(lib["grid_stride_fold"]) == ["factor"]
    assert coarsening_holes(lib["grid_stride_loop_wide"]) == ["factor"]
    # a hole that grows the grid (a row split) or reshapes the block is no coarsening
    assert coarsening_holes(lib["block_column_to_row_split"]) == []
    assert coarsening_holes(lib["thread_per_column_to_block_column_reduce"]) == []
    fold = lib["grid_stride_fold"]  # {2, 4, ..., 256}
    assert larger_value(fold, "factor", "16") == "32"
    assert larger_value(fold, "factor", "256") is None
    assert larger_value(fold, "op", "fmaxf") is None
    # a range (1..65535): twice the value, while inside it; a grid.y *= hole is no coarsening
    experts = RuleSet.load([str(ROOT / "skills/experts/strided_loops.rule")]).rules
    tiles = next(r for r in experts if r.name == "whole_range_to_grid_y_tiles")
    assert larger_value(tiles, "tiles", "64") == "128"
    assert larger_value(tiles, "tiles", "40000") is None
    assert coarsening_holes(tiles) == []


def test_a_recipe_climbs_its_factor_while_it_pays(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """absmax_grid's recipe replays grid_stride_fold at the walk's ?factor=16; with each
    doubling faster (1 + 16 / k ms), the climb tries 32, 64 and 128 (three steps, as many as
    phase B has) and keeps 128."""
    lib = rules()
    g = ByFactor(lambda k: 4.0 if k == 1 else 1.0 + 16 / k)
    res = _run(ABSMAX, g, tmp_path, monkeypatch, list(lib.values()), budget=8)
    assert g.factors[:5] == [1, 16, 32, 64, 128], g.factors
    assert 256 not in g.factors, g.factors
    first = res.steps[0]
    assert first.kind == "recipe" and first.skill.endswith("with ?factor=128"), first.skill
    assert grid_factor(res.source) == 128


def test_a_recipe_stops_climbing_at_the_first_step_that_does_not_pay(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    g = ByFactor(lambda k: {1: 4.0, 16: 1.5}.get(k, 1.6))
    res = _run(ABSMAX, g, tmp_path, monkeypatch, list(rules().values()), budget=8)
    assert g.factors[:3] == [1, 16, 32] and 64 not in g.factors, g.factors
    assert grid_factor(res.source) == 16
    assert res.steps[0].kind == "recipe" and "with ?factor" not in res.steps[0].skill


def test_no_climb_at_the_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A recipe kernel at 95% of SOL (target 90%) has no headroom: no factor above it."""
    g = ByFactor(lambda k: 4.0 if k == 1 else 0.5 / 0.95, floor_ms=0.5)
    _run(ABSMAX, g, tmp_path, monkeypatch, list(rules().values()), budget=8)
    assert g.factors[:2] == [1, 16] and 32 not in g.factors, g.factors


def test_phase_b_climbs_a_site_s_factor(tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """grid_stride_loop_wide alone on a privatised byte histogram, no recipe: its default
    ?factor=64 pays, phase B climbs to 128 and 256 (each faster, 256 the top of the domain)
    before the filler's ranked values (32, 16, ...) that closeness to 64 would try."""
    g = ByFactor(lambda k: 8.0 / (1 + k.bit_length()) if k > 1 else 8.0)
    res = _run(HIST, g, tmp_path, monkeypatch, [rules()["grid_stride_loop_wide"]], budget=5,
               recipes=[])
    assert g.factors[:5] == [1, 64, 128, 256, 32], g.factors
    assert grid_factor(res.source) == 256


def test_phase_b_gives_the_filler_what_the_climb_left(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """128 is slower than 64: the climb stops after one trial, and the filler's ranked values
    (by closeness to the default) take the rest of phase B."""
    g = ByFactor(lambda k: {1: 8.0, 64: 2.0, 128: 2.5, 32: 1.8}.get(k, 3.0))
    res = _run(HIST, g, tmp_path, monkeypatch, [rules()["grid_stride_loop_wide"]], budget=5,
               recipes=[])
    assert g.factors[:3] == [1, 64, 128], g.factors
    assert 256 not in g.factors and 32 in g.factors[3:], g.factors
    assert grid_factor(res.source) == 32
