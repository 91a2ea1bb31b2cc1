"""Ranking by headroom (klc.optimize.headroom): what a skill changes, read from the rule
itself; its expected gain at a measured % of SOL; the tiers a round tries; the budget a batch
shares between files. The pure functions are tested on the shipped skills (their cards and
skills/measurements.json) with made-up but plausible headrooms; the loop against a scripted
gate; and (marked gpu) a real run on a shipped example."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from klc.cuda.parse import read_source
from klc.gate import GateRecord, StageResult
from klc.optimize import OptimizeOptions, optimize
from klc.optimize.headroom import (
    FAR_SOL,
    NEAR_SOL,
    expected_gain,
    headroom_weight,
    measured_speedup,
    rank_key,
    reach,
    regime,
    split_budget,
    structural,
    tiers,
)
from klc.rule import Rule, RuleSet, default_skill_dirs

ROOT = Path(__file__).resolve().parents[2]
SIGMOID = ROOT / "bench" / "examples" / "sigmoid.cu"
# a thread-per-row kernel of the transfer set: a structural skill (warp per row) and cheap
# ones (launch bounds, restrict) apply
XENT = ROOT / "bench" / "transfer" / "cross_entropy_padded.cu"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def library() -> dict[str, Rule]:
    return {r.name: r for r in RuleSet.load(default_skill_dirs()).rules}


# --------------------------------------------------------------------------------------
# Structural or cheap, from the rule


@pytest.mark.parametrize(("name", "aspects"), [
    ("thread_per_row_to_warp_per_row", ("launch", "threads", "loops")),  # within blocks
    ("grid_stride_loop", ("launch", "threads", "loops")),
    ("rows_per_thread", ("launch", "loops")),
    ("pad_smem_tile", ("shared memory",)),
    ("privatize_atomic_histogram", ("threads", "loops", "shared memory")),
    ("vectorize_float4_loop", ("loops",)),
    ("add_restrict", ()),  # a qualifier writes no code
    ("add_launch_bounds", ()),  # an attribute
    ("add_bare_pragma_unroll", ()),  # a pragma before the same loop
    ("precise_exp_to_fast", ()),  # another intrinsic at the same place
    ("vectorize_float4_load", ()),  # a wider access at the same place
])
def test_reach_is_read_from_the_rule(library: dict[str, Rule], name: str,
                                     aspects: tuple[str, ...]) -> None:
    r = reach(library[name])
    assert r.aspects == aspects
    assert structural(library[name]) == bool(aspects)
    assert r.describe() == ("cheap" if not aspects else f"structural ({', '.join(aspects)})")


def test_a_within_block_counts_by_what_its_sub_rules_write(library: dict[str, Rule]) -> None:
    rule = library["thread_per_row_to_warp_per_row"]
    # without its launch edit and its replace, the loops the within blocks re-stride (and the
    # warp shuffles they add) still make it structural
    only_within = replace(rule, edits=tuple(e for e in rule.edits if e.subrules()))
    assert reach(only_within).aspects == ("threads", "loops")


# --------------------------------------------------------------------------------------
# Expected gain: the measured speedup by verdict, capped by the headroom


def test_expected_gain_is_capped_by_the_headroom(library: dict[str, Rule]) -> None:
    warp = library["thread_per_row_to_warp_per_row"]  # measured 9.34x (faster)
    best = measured_speedup(warp)
    assert best is not None and 2.0 < best < 100 / 3
    assert expected_gain(warp, 3.0) == pytest.approx(best)
    assert expected_gain(warp, 60.0) == pytest.approx(100 / 60)
    assert expected_gain(warp, None) == pytest.approx(best)  # unknown: uncapped
    assert expected_gain(library["add_const_param"], 3.0) == 1.0  # neutral
    assert expected_gain(library["split_k_loop"], 3.0) < 1.0  # slower
    assert expected_gain(library["unroll_loop"], 3.0) == 1.0  # hand-written, unmeasured


def test_rank_key_orders_by_expected_gain_then_verdict(library: dict[str, Rule]) -> None:
    names = ["add_const_param", "add_launch_bounds", "thread_per_row_to_warp_per_row",
             "unroll_loop", "add_restrict"]
    at = {pct: [n for n in sorted(names, key=lambda n: rank_key(library[n], pct))]
          for pct in (5.0, 50.0)}
    assert at[5.0] == ["thread_per_row_to_warp_per_row", "add_launch_bounds",
                       "add_restrict", "unroll_loop", "add_const_param"]
    # at 50% the 9.34x is worth at most 2x: still first, but by its cap
    assert at[50.0][0] == "thread_per_row_to_warp_per_row"
    assert expected_gain(library["thread_per_row_to_warp_per_row"], 50.0) == 2.0


@pytest.mark.parametrize(("pct", "want"), [
    (None, "mid"), (3.0, "far"), (FAR_SOL - 0.1, "far"), (FAR_SOL, "mid"), (60.0, "mid"),
    (NEAR_SOL, "near"), (95.0, "near")])
def test_regime(pct: float | None, want: str) -> None:
    assert regime(pct) == want


def test_tiers_far_mid_near(library: dict[str, Rule]) -> None:
    rules = [library[n] for n in ("add_restrict", "add_launch_bounds",
                                  "thread_per_row_to_warp_per_row", "vectorize_float4_load",
                                  "rows_per_thread")]
    far, out = tiers(rules, 3.0)  # structural first, then the cheap ones
    assert out == []
    assert [r.name for r in far[0]] == ["thread_per_row_to_warp_per_row", "rows_per_thread"]
    assert [r.name for r in far[1]] == ["add_launch_bounds", "vectorize_float4_load",
                                        "add_restrict"]
    mid, out = tiers(rules, 50.0)  # one tier by expected gain
    assert out == [] and len(mid) == 1
    assert [r.name for r in mid[0]] == ["thread_per_row_to_warp_per_row", "rows_per_thread",
                                        "add_launch_bounds", "vectorize_float4_load",
                                        "add_restrict"]
    near, out = tiers(rules, 85.0)  # only cheap ones; the structural ones are left out
    assert [r.name for r in near[0]] == ["add_launch_bounds", "vectorize_float4_load",
                                         "add_restrict"]
    assert [r.name for r in out] == ["thread_per_row_to_warp_per_row", "rows_per_thread"]


# --------------------------------------------------------------------------------------
# One budget across files


def test_split_budget_by_headroom() -> None:
    pct = {"softmax.cu": 3.0, "gelu.cu": 55.0, "adamw.cu": 80.0, "copy.cu": 95.0,
           "nospec.cu": None}
    share = split_budget(60, pct)
    assert sum(share.values()) == 60
    assert share["copy.cu"] == 0  # at the target already: nothing to spend
    assert share["softmax.cu"] > share["gelu.cu"] > share["adamw.cu"] >= 1
    # unknown headroom: the mean weight of the known ones
    known = [headroom_weight(p) for p in (3.0, 55.0, 80.0, 95.0)]
    mean = sum(w for w in known if w is not None) / 4
    assert share["nospec.cu"] == pytest.approx(60 * mean / (sum(known) + mean), abs=1.5)
    assert split_budget(60, pct) == share  # deterministic


def test_split_budget_small_and_edge_cases() -> None:
    pct = {"a.cu": 3.0, "b.cu": 40.0, "c.cu": 70.0}
    assert split_budget(2, pct) == {"a.cu": 1, "b.cu": 1, "c.cu": 0}  # most headroom first
    assert split_budget(0, pct) == {"a.cu": 0, "b.cu": 0, "c.cu": 0}
    assert split_budget(9, {"x.cu": None, "y.cu": None}) in ({"x.cu": 5, "y.cu": 4},
                                                             {"x.cu": 4, "y.cu": 5})
    assert split_budget(10, {"done.cu": 99.0}) == {"done.cu": 0}
    assert split_budget(5, {}) == {}
    with pytest.raises(ValueError):
        split_budget(-1, pct)
    assert headroom_weight(90.0) == 0.0 and headroom_weight(None) is None
    assert headroom_weight(3.0) == pytest.approx(3.4012, abs=1e-3)


# --------------------------------------------------------------------------------------
# The loop, against a scripted gate


class ScriptedGate:
    """Every candidate passes; a kernel with a feature (a substring) runs ``factor`` times
    faster; the floor sets the original's % of SOL."""

    def __init__(self, effects: dict[str, float], floor_ms: float) -> None:
        self.effects, self.floor_ms = effects, floor_ms
        self.calls: list[bytes] = []

    def time_of(self, source: bytes) -> float:
        t = 1.0
        for feature, factor in self.effects.items():
            if feature.encode() in source:
                t /= factor
        return t

    def __call__(self, candidate: bytes, path: str, *, reference: bytes | None = None,
                 reference_path: str | None = None, arch: str | None = None,
                 stages: Iterable[str] = (), seeds: Iterable[int] | None = None,
                 timeout_s: float | None = None) -> GateRecord:
        self.calls.append(candidate)
        t = self.time_of(candidate)
        data: dict[str, Any] = {"median_ms": t, "noise": 0.004,
                                "sol": {"pct_of_sol": 100 * self.floor_ms / t,
                                        "bound": "memory"}}
        if reference is not None:
            data["speedup"] = self.time_of(reference) / t
        st = {"compile": StageResult("passed", "compiled", {}),
              "verify": StageResult("passed", "agree", {"seeds": list(seeds or [1, 2, 3])}),
              "profile": StageResult("passed", "timed", data)}
        return GateRecord(path, "k", hashlib.sha256(candidate).hexdigest(), reference_path,
                          None, arch or "sm_90", (), "Scripted GPU", st, verdict="passed",
                          reason="all stages passed")


def _xent_skills(library: dict[str, Rule]) -> list[Rule]:
    # a cheap skill whose card claims more than the structural one: by verdict and speedup
    # alone it would go first
    bounds = library["add_launch_bounds"]
    loud = replace(bounds, card=replace(bounds.card, effect=("faster: 20x on H100",)))
    return [loud, library["thread_per_row_to_warp_per_row"], library["add_restrict"]]


def _run(gate: ScriptedGate, library: dict[str, Rule], **kw: Any) -> Any:
    return optimize(read_source(XENT), str(XENT), OptimizeOptions(
        gpu=True, gate_fn=gate, arch="sm_90", use_cache=False, recipes=[],
        skills=_xent_skills(library), **kw))


def test_far_from_sol_the_structural_skill_goes_first(library: dict[str, Rule]) -> None:
    gate = ScriptedGate({"__shfl_xor_sync": 8.0}, floor_ms=0.03)  # the original: 3% of SOL
    result = _run(gate, library, budget=3)
    assert b"__shfl_xor_sync" in gate.calls[1]  # calls[0] is the original
    first = result.ranking[0]
    assert first["regime"] == "far" and first["pct_of_sol"] == pytest.approx(3.0)
    assert [e["skill"] for e in first["tiers"][0]] == ["thread_per_row_to_warp_per_row"]
    assert first["tiers"][0][0]["reach"] == "structural (launch, threads, loops)"
    # the round tried only the structural tier: the cheap ones wait for a round where it
    # has nothing left to propose
    assert {t.skill for t in result.trials if t.round == 1} == {
        "thread_per_row_to_warp_per_row"}
    assert result.changed and result.steps[0].skill == "thread_per_row_to_warp_per_row"

    # without the headroom ranking the loud cheap card goes first
    gate = ScriptedGate({"__shfl_xor_sync": 8.0}, floor_ms=0.03)
    result = _run(gate, library, budget=3, rank_by_headroom=False)
    assert b"__launch_bounds__" in gate.calls[1] and b"__shfl_xor_sync" not in gate.calls[1]
    assert result.ranking == []


def test_near_sol_only_cheap_skills_are_tried(library: dict[str, Rule]) -> None:
    gate = ScriptedGate({"__shfl_xor_sync": 8.0}, floor_ms=0.85)  # the original: 85%
    result = _run(gate, library, budget=20)
    assert not any(b"__shfl_xor_sync" in c for c in gate.calls)
    assert [e["skill"] for e in result.left_out] == ["thread_per_row_to_warp_per_row"]
    assert any("thread_per_row_to_warp_per_row" in n and "only cheap skills" in n
               for n in result.notes)
    assert result.ranking[0]["regime"] == "near"
    # no phase B, and the loop stops once the cheap skills have nothing left: well within
    # the budget
    assert result.trials_used < 20
    assert "near the speed-of-light floor" in result.stop_reason
    assert result.to_json()["left_out_near_sol"][0]["reach"].startswith("structural")


# --------------------------------------------------------------------------------------
# On a GPU


def _first_seen(skills: Iterable[str]) -> list[str]:
    out: list[str] = []
    for s in skills:
        if s not in out:
            out.append(s)
    return out


def _assert_tried_in_ranking_order(result: Any) -> None:
    """The skills of each round were tried in the order of its ranking (the tiers, each by
    expected gain at the measured % of SOL, ties by name); near SOL no structural skill was
    tried; far from it a structural tier comes first."""
    assert result.ranking, "the loop ran no round"
    for entry in result.ranking:
        order = [e["skill"] for tier in entry["tiers"] for e in tier]
        tried = _first_seen(t.skill for t in result.trials if t.round == entry["round"]
                            and t.outcome != "baseline")
        assert set(tried) <= set(order), (tried, order)
        positions = [order.index(s) for s in tried]
        assert positions == sorted(positions), (tried, order)
        if entry["regime"] == "near":
            assert not {s for s in tried} & set(entry["left_out"])
        if entry["regime"] == "far" and tried:
            first_tier = [e for e in entry["tiers"][0]]
            assert all(e["reach"].startswith("structural") for e in first_tier) or \
                not any(e["reach"].startswith("structural") for t in entry["tiers"]
                        for e in t)


def test_sites_are_tried_in_the_order_the_ranking_reports() -> None:
    """Skills are tried as the ranking lists them, not by where their sites sit. Here, once
    warp per row is in, add_bare_pragma_unroll expects at least add_restrict's gain (the
    walks measured an unroll at 1.27x); the restrict site (the parameters) comes before the
    pragma site (a loop) in the file, and the pragma is tried first."""
    gate = ScriptedGate({"__shfl_xor_sync": 8.0}, floor_ms=0.03)
    result = optimize(read_source(XENT), str(XENT), OptimizeOptions(
        gpu=True, gate_fn=gate, arch="sm_90", use_cache=False, recipes=[], budget=10))
    second = {e["skill"]: e["expected_gain"] for t in result.ranking[1]["tiers"] for e in t}
    assert second["add_bare_pragma_unroll"] >= second["add_restrict"]
    tried = _first_seen(t.skill for t in result.trials if t.round == 2)
    assert tried.index("add_bare_pragma_unroll") < tried.index("add_restrict")
    _assert_tried_in_ranking_order(result)


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", [SIGMOID, XENT], ids=["sigmoid", "cross_entropy_padded"])
def test_tried_skills_follow_the_ranking_on_the_gpu(tmp_path: Path, kernel: Path) -> None:
    """A real optimize: the skills of each round are tried in the order of its ranking."""
    result = optimize(read_source(kernel), str(kernel), OptimizeOptions(
        budget=10, cache_dir=str(tmp_path / "gate"), recipes=[]))
    assert result.mode == "gpu" and result.baseline and result.baseline["verdict"] == "passed"
    _assert_tried_in_ranking_order(result)


def test_markdown_report_shows_the_ranking(library: dict[str, Rule]) -> None:
    from klc.optimize import to_markdown

    gate = ScriptedGate({"__shfl_xor_sync": 8.0}, floor_ms=0.03)
    md = to_markdown(_run(gate, library, budget=3))
    assert "## Ranking by headroom" in md
    warp = expected_gain(library["thread_per_row_to_warp_per_row"], 3.0)
    assert (f"| 1 | 3% | far | thread_per_row_to_warp_per_row ({warp:.2f}x, structural "
            "(launch, threads, loops)) ; then add_launch_bounds (20.00x, cheap)") in md


INSERTS = '''\
rule declare_beside_a_loop {
  kind: skill
  description: "a declaration inserted beside a loop it leaves as it is"
  context: any
  anchor: ```
    for (int $I = 0; $I < $N; $I++) { $$$B; }
  ```
  rewrite insert_body_start: ```
    int klc_count = 0;
  ```
}

rule tile_beside_a_loop {
  kind: skill
  description: "a shared tile inserted beside a loop"
  context: any
  anchor: ```
    for (int $I = 0; $I < $N; $I++) { $$$B; }
  ```
  rewrite insert_body_start: ```
    __shared__ float klc_tile[256];
  ```
}
'''


def test_code_inserted_beside_the_anchor_counts_in_full() -> None:
    from klc.rule import load_rules_text

    rules = {r.name: r for r in load_rules_text(INSERTS, "inserts.rule")}
    # the anchor's loop is left as it is: only what is inserted counts
    assert reach(rules["declare_beside_a_loop"]).aspects == ()
    assert reach(rules["tile_beside_a_loop"]).aspects == ("shared memory",)
