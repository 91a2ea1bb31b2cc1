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
from klc.recipes import RECIPES_FILE, build, load, replay, to_yaml
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
