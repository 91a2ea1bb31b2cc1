"""The optimize loop: control flow against a scripted gate (injected with ``gate_fn``: a unit
test of the loop, not of the gate), the gate-result cache (a second run spends nothing), the
real static path on bench/examples/sigmoid.cu without a GPU, the command, and (marked gpu)
the whole thing on a real GPU."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from klc.cli import main
from klc.cuda.parse import read_source
from klc.errors import KlcError
from klc.gate import GateRecord, StageResult
from klc.gate.cache import GateCache, cache_key, record_from_json
from klc.optimize import OptimizeOptions, optimize, to_markdown
from klc.rule import Rule, load_rules

ROOT = Path(__file__).resolve().parents[2]
SIGMOID = ROOT / "bench" / "examples" / "sigmoid.cu"
# fixed skills written for these tests (their cards are the tests' premises); the shipped
# library is learned and regenerated, so only test_real_library_static_path uses it
SKILLS = ROOT / "tests" / "data" / "skills"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))


class FakeGate:
    """A scripted gate: a kernel's time is ``base_ms`` divided by the factor of every feature
    (a substring) its source has; a candidate with a ``fail`` feature fails verify; with
    ``fail_seeds``, runs with explicit seeds (the re-verification) fail. Every call is
    recorded, so tests count trials."""

    def __init__(self, effects: dict[str, float], fail: Iterable[str] = (),
                 base_ms: float = 1.0, floor_ms: float = 0.2, noise: float = 0.004,
                 fail_seeds: bool = False) -> None:
        self.effects = effects
        self.fail = tuple(fail)
        self.base_ms, self.floor_ms, self.noise = base_ms, floor_ms, noise
        self.fail_seeds = fail_seeds
        self.calls: list[dict[str, Any]] = []

    def time_of(self, source: bytes) -> float:
        t = self.base_ms
        for feature, factor in self.effects.items():
            if feature.encode() in source:
                t /= factor
        return t

    def __call__(self, candidate: bytes, path: str, *, reference: bytes | None = None,
                 reference_path: str | None = None, arch: str | None = None,
                 stages: Iterable[str] = (), seeds: Iterable[int] | None = None,
                 timeout_s: float | None = None) -> GateRecord:
        seeds = list(seeds) if seeds is not None else None
        self.calls.append({"candidate": candidate, "reference": reference, "seeds": seeds})
        st = {"compile": StageResult("passed", "compiled", {})}
        rec = GateRecord(path, "sigmoid", hashlib.sha256(candidate).hexdigest(),
                         reference_path, None, arch or "sm_90", (), "Scripted GPU", st)
        bad = next((f for f in self.fail if f.encode() in candidate), None)
        if bad is None and self.fail_seeds and seeds is not None:
            bad = "fresh seeds"
        if bad is not None:
            st["verify"] = StageResult("failed", f"mismatch ({bad})")
            st["profile"] = StageResult("skipped", "not run: verify failed")
            rec.verdict, rec.reason = "failed", f"verify: mismatch ({bad})"
            return rec
        used = seeds or [11 + len(self.calls), 12, 13]
        st["verify"] = StageResult("passed", "agree", {"seeds": used})
        t = self.time_of(candidate)
        data: dict[str, Any] = {"median_ms": t, "noise": self.noise,
                                "sol": {"pct_of_sol": 100 * self.floor_ms / t,
                                        "bound": "memory"}}
        if reference is not None:
            data["speedup"] = self.time_of(reference) / t
        st["profile"] = StageResult("passed", "timed", data)
        rec.verdict, rec.reason = "passed", "all stages passed"
        return rec


def run(gate: FakeGate, source: bytes | None = None, **kw: Any) -> Any:
    kw.setdefault("use_cache", False)
    kw.setdefault("skills", _skills())
    return optimize(source or read_source(SIGMOID), str(SIGMOID), OptimizeOptions(
        gpu=True, gate_fn=gate, arch="sm_90", **kw))


# --------------------------------------------------------------------------------------
# The loop


def test_accepts_improvements_in_order_and_reverifies() -> None:
    gate = FakeGate({"__expf": 1.3, "__launch_bounds__(512)": 1.05})
    result = run(gate)
    assert result.changed and result.verified
    assert [s.skill for s in result.steps] == ["precise_exp_to_fast", "add_launch_bounds"]
    assert result.steps[1].values == {"threads": "512"}
    assert result.steps[0].speedup_vs_previous == pytest.approx(1.3)
    assert result.steps[1].speedup_vs_original == pytest.approx(1.365)
    assert b"__expf(" in result.source and b"__launch_bounds__(512)" in result.source
    # the independent re-verification: the final kernel against the original, fresh seeds
    last = gate.calls[-1]
    assert last["candidate"] == result.source and last["reference"] == read_source(SIGMOID)
    trial_seeds = {12, 13} | {11 + i for i in range(1, len(gate.calls))}
    assert last["seeds"] and not set(last["seeds"]) & trial_seeds
    assert result.speedup == pytest.approx(1.365)
    # every gate call but the re-verification is a budget trial; 64 and 128 threads were
    # refused statically (below the 256-thread block) and cost none
    assert result.trials_used == len(gate.calls) - 1
    refused = {c["values"]["threads"] for c in result.static_refusals
               if c.get("values", {}).get("threads")}
    assert {"64", "128"} <= refused
    assert all(b"__launch_bounds__(64)" not in c["candidate"] for c in gate.calls)
    assert result.trials_to_fraction(0.95) == 3  # the 1.3x exp alone is 95% of 1.365x


def test_stops_at_the_sol_target() -> None:
    # floor 0.2 ms: the 1.3x kernel (0.77 ms) is at 26% of SOL; with a floor of 0.7 ms it is
    # at 91%, so the loop stops after the first step
    gate = FakeGate({"__expf": 1.3, "__launch_bounds__(512)": 1.05}, floor_ms=0.7)
    result = run(gate)
    assert [s.skill for s in result.steps] == ["precise_exp_to_fast"]
    assert "reached 91% of the speed-of-light floor" in result.stop_reason


def test_budget_is_respected_and_failures_count() -> None:
    gate = FakeGate({"__expf": 1.3}, fail=["__launch_bounds__"])
    result = run(gate, budget=2)
    assert result.trials_used == 2  # the original and one candidate
    assert len(gate.calls) <= 3  # + the re-verification when something was kept
    assert "budget of 2 gate trials is spent" in result.stop_reason
    failed = [t for t in result.trials if t.verdict == "failed"]
    assert all(t.outcome == "failed" for t in failed)


def test_failed_candidates_are_never_kept() -> None:
    gate = FakeGate({"__expf": 2.0}, fail=["__expf"])
    result = run(gate)
    assert not result.changed and result.source == read_source(SIGMOID)
    assert all(s.skill != "precise_exp_to_fast" for s in result.steps)
    assert any(t.skill == "precise_exp_to_fast" and t.verdict == "failed"
               for t in result.trials)


def test_gain_within_noise_is_not_kept() -> None:
    gate = FakeGate({"__expf": 1.01, "__launch_bounds__": 1.005}, noise=0.03)
    result = run(gate)
    assert not result.changed and not result.steps
    assert "nothing improved" in " ".join(result.notes)


def test_failed_reverification_keeps_the_original() -> None:
    gate = FakeGate({"__expf": 1.5}, fail_seeds=True)
    result = run(gate)
    assert result.steps  # the loop accepted a step ...
    assert not result.changed and not result.verified  # ... that re-verification rejected
    assert result.source == read_source(SIGMOID)
    assert "FAILED the independent re-verification" in " ".join(result.notes)


def test_candidate_the_gate_refuses_as_input_costs_no_trial() -> None:
    class Refusing(FakeGate):
        def __call__(self, candidate: bytes, path: str, **kw: Any) -> GateRecord:
            if b"__launch_bounds__" in candidate:
                raise KlcError(f"{path}:1:1: the candidate's spec does not fit")
            return super().__call__(candidate, path, **kw)

    gate = Refusing({"__expf": 1.3})
    result = run(gate)
    assert result.changed and [s.skill for s in result.steps] == ["precise_exp_to_fast"]
    assert any(r["stage"] == "gate" and "spec does not fit" in r["reason"]
               for r in result.static_refusals)
    assert result.trials_used == len(result.trials)  # the refused candidate is not one


def test_original_that_fails_its_own_gate_is_an_error() -> None:
    gate = FakeGate({}, fail=["sigmoid"])
    with pytest.raises(KlcError, match="does not pass its own gate"):
        run(gate)


ENABLING = '''
rule reorder {
  kind: skill
  description: "1 + e^x as e^x + 1 (changes no time, but makes fast_exp applicable)"
  context: any
  anchor: ```
    1.0f + expf($X)
  ```
  rewrite replace: ```
    expf($X) + 1.0f
  ```
  card {
    intent: "test"
  }
}

rule fast_exp {
  kind: skill
  description: "fast exp, only in the reordered form"
  context: any
  isomorphisms: -commutative
  anchor: ```
    expf($X) + 1.0f
  ```
  rewrite replace: ```
    __expf($X) + 1.0f
  ```
  card {
    intent: "test"
    effect: "measured: 1.4x on H200"
  }
}
'''


def test_neutral_step_that_enables_a_skill_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "enable.rule"
    path.write_text(ENABLING)
    gate = FakeGate({"__expf": 1.4})
    result = run(gate, skills=load_rules(path))
    assert [(s.skill, s.kind) for s in result.steps] == [("reorder", "enabling"),
                                                         ("fast_exp", "improvement")]
    assert result.changed and result.speedup == pytest.approx(1.4)


THREE_EXPS = b"""/* klc-spec
kernel: three
sizes: {n: 1024}
args:
  - {name: a, shape: [n], role: in, init: normal}
  - {name: b, shape: [n], role: in, init: normal}
  - {name: c, shape: [n], role: in, init: normal}
  - {name: y, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
__global__ void three(const float* a, const float* b, const float* c, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = expf(a[i]) + expf(b[i]) + expf(c[i]);
    }
}
"""


def test_rule_is_tried_at_all_its_sites_first_then_one_by_one() -> None:
    fast = [r for r in _skills() if r.name == "precise_exp_to_fast"]
    gate = FakeGate({"__expf(a": 1.1, "__expf(c": 1.1})
    result = run(gate, source=THREE_EXPS, skills=fast)
    first = gate.calls[1]["candidate"]  # calls[0] is the original
    assert first.count(b"__expf(") == 3  # one trial for the three sites
    assert result.trials[1].site.endswith("(+2 more sites)")
    assert result.changed and result.source == first
    assert result.steps[0].speedup_vs_original == pytest.approx(1.21)

    gate = FakeGate({"__expf(a": 1.1, "__expf(c": 1.1}, fail=["__expf(b"])
    result = run(gate, source=THREE_EXPS, skills=fast)
    # the three-site candidate failed (b's site), so the sites were tried one by one
    assert result.trials[1].verdict == "failed" and "more sites" in result.trials[1].site
    assert result.changed and result.source.count(b"__expf(") == 2
    assert b"__expf(b" not in result.source


def test_card_effect_ranks_sites() -> None:
    # by source order the launch bounds (the function, line 14) come before the exp (line 17)
    gate = FakeGate({"__expf": 1.3})
    run(gate, budget=2)
    assert b"__launch_bounds__" in gate.calls[1]["candidate"]  # calls[0] is the original
    # a card's measured speedup goes before source order (same verdict)
    rules = [_with_card(r, effect=("measured: 1.5x on H200",))
             if r.name == "precise_exp_to_fast" else r for r in _skills()]
    gate = FakeGate({"__expf": 1.3})
    run(gate, skills=rules, budget=3)
    first = gate.calls[1]["candidate"]
    assert b"__expf" in first and b"__launch_bounds__" not in first


def _skills() -> list[Rule]:
    from klc.rule import RuleSet

    return list(RuleSet.load([str(SKILLS)]).rules)


def _with_card(rule: Rule, **card: Any) -> Rule:
    from dataclasses import replace

    return replace(rule, card=replace(rule.card, **card))


def _verdicts(**verdicts: str) -> list[Rule]:
    """The test skills, with these skills' card verdicts."""
    return [_with_card(r, verdict=verdicts[r.name]) if r.name in verdicts else r
            for r in _skills()]


def _first_skill(gate: FakeGate) -> str:
    first = gate.calls[1]["candidate"]  # calls[0] is the original
    return "add_launch_bounds" if b"__launch_bounds__" in first else "precise_exp_to_fast"


# --------------------------------------------------------------------------------------
# Verdicts: faster, then unmeasured, then neutral; slower skipped with a note


@pytest.mark.parametrize(("verdicts", "first"), [
    ({}, "add_launch_bounds"),  # both unmeasured: source order
    ({"precise_exp_to_fast": "faster"}, "precise_exp_to_fast"),
    ({"add_launch_bounds": "neutral"}, "precise_exp_to_fast"),
    ({"add_launch_bounds": "neutral", "precise_exp_to_fast": "faster"}, "precise_exp_to_fast"),
    ({"add_launch_bounds": "faster", "precise_exp_to_fast": "neutral"}, "add_launch_bounds"),
    ({"add_launch_bounds": "neutral", "precise_exp_to_fast": ""}, "precise_exp_to_fast"),
])
def test_verdict_ranks_skills(verdicts: dict[str, str], first: str) -> None:
    gate = FakeGate({})
    run(gate, skills=_verdicts(**verdicts), budget=2)
    assert _first_skill(gate) == first


def test_verdict_goes_before_the_cards_speedup() -> None:
    rules = [_with_card(r, effect=("neutral (within the noise): 1.5x on H200",),
                        verdict="neutral") if r.name == "add_launch_bounds" else r
             for r in _verdicts(precise_exp_to_fast="unmeasured")]
    gate = FakeGate({})
    run(gate, skills=rules, budget=2)
    assert _first_skill(gate) == "precise_exp_to_fast"


def test_slower_skill_is_skipped_with_a_note() -> None:
    rules = _verdicts(precise_exp_to_fast="slower")
    gate = FakeGate({"__expf": 1.3})  # it would win here: the card is what keeps it out
    result = run(gate, skills=rules)
    assert all(b"__expf" not in c["candidate"] for c in gate.calls)
    assert all(t.skill != "precise_exp_to_fast" for t in result.trials)
    assert not result.changed  # nothing else is faster
    assert [(s["skill"], s["verdict"]) for s in result.skipped] == \
        [("precise_exp_to_fast", "slower")]
    assert result.skipped[0]["sites"] == [f"{SIGMOID}:17:31"]
    note = next(n for n in result.notes if "precise_exp_to_fast" in n)
    assert '"slower"' in note and "--include-slower" in note and f"{SIGMOID}:17:31" in note
    assert result.to_json()["skipped_slower"] == result.skipped
    assert "--include-slower" in to_markdown(result)
    # asked for: tried (ranked last) and kept, since it is faster here
    gate = FakeGate({"__expf": 1.3})
    result = run(gate, skills=rules, include_slower=True)
    assert _first_skill(gate) == "add_launch_bounds" and not result.skipped
    assert result.changed and [s.skill for s in result.steps] == ["precise_exp_to_fast"]


def test_only_slower_skills_apply() -> None:
    rules = _verdicts(precise_exp_to_fast="slower", add_launch_bounds="slower")
    gate = FakeGate({"__expf": 1.3})
    result = run(gate, skills=rules)
    assert len(gate.calls) == 1 and not result.changed  # the original alone
    assert "measured slower" in result.stop_reason and "--include-slower" in result.stop_reason
    assert {s["skill"] for s in result.skipped} == {"precise_exp_to_fast", "add_launch_bounds"}


def test_static_path_skips_slower_skills() -> None:
    rules = _verdicts(add_launch_bounds="slower", precise_exp_to_fast="faster")
    result = optimize(read_source(SIGMOID), str(SIGMOID), OptimizeOptions(
        gpu=False, arch="sm_90", skills=rules))
    assert [c["skill"] for c in result.static_candidates] == ["precise_exp_to_fast"]
    assert [s["skill"] for s in result.skipped] == ["add_launch_bounds"]
    assert any("add_launch_bounds" in n and "--include-slower" in n for n in result.notes)
    result = optimize(read_source(SIGMOID), str(SIGMOID), OptimizeOptions(
        gpu=False, arch="sm_90", skills=rules, include_slower=True))
    # ranked: the faster one first, the slower one last
    assert [c["skill"] for c in result.static_candidates] == ["precise_exp_to_fast",
                                                              "add_launch_bounds"]


def _skills_folder(tmp_path: Path, **verdicts: str) -> Path:
    """A copy of the test skills with these card verdicts, as files (for the commands)."""
    folder = tmp_path / "skills"
    folder.mkdir()
    for path in SKILLS.glob("*.rule"):
        text = path.read_text()
        for name, verdict in verdicts.items():
            if f"rule {name} " in text:
                text = text.replace('verdict: "unmeasured"', f'verdict: "{verdict}"')
        (folder / path.name).write_text(text)
    return folder


def test_command_include_slower(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    folder = _skills_folder(tmp_path, precise_exp_to_fast="slower")
    _fake_gpu(monkeypatch, FakeGate({"__expf": 1.3}))
    argv = ["optimize", str(SIGMOID), "--no-cache", "--skills", str(folder), "--json"]
    assert main(argv) == 1
    data = json.loads(capsys.readouterr().out)
    assert [s["skill"] for s in data["skipped_slower"]] == ["precise_exp_to_fast"]
    assert main([*argv, "--include-slower"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["steps"][0]["skill"] == "precise_exp_to_fast" and not data["skipped_slower"]


def test_list_shows_verdicts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _skills_folder(tmp_path, precise_exp_to_fast="slower",
                            add_launch_bounds="faster")
    assert main(["list", str(SIGMOID), "--skills", str(folder)]) == 0
    out = capsys.readouterr().out
    lines = {ln.split(": ", 1)[1].split(" (")[0]: ln for ln in out.splitlines()
             if ln.startswith(str(SIGMOID))}
    assert "precise_exp_to_fast (when not: measured slower) (" in lines["precise_exp_to_fast"]
    assert "add_launch_bounds (measured faster) (" in lines["add_launch_bounds"]
    assert main(["list", str(SIGMOID), "--skills", str(folder), "--json"]) == 0
    sites = json.loads(capsys.readouterr().out)
    assert {s["rule"]: s["verdict"] for s in sites} == {
        "precise_exp_to_fast": "slower", "add_launch_bounds": "faster"}
    # a hand-written rule has no verdict: nothing shown, null in the JSON
    hand = tmp_path / "hand.rule"
    hand.write_text((SKILLS / "fast_math.rule").read_text().replace(
        '    verdict: "unmeasured"\n', ""))
    assert main(["list", str(SIGMOID), "--skills", str(hand), "--json"]) == 0
    assert [s["verdict"] for s in json.loads(capsys.readouterr().out)] == [None]
    assert main(["list", str(SIGMOID), "--skills", str(hand)]) == 0
    assert f"precise_exp_to_fast ({hand}:3)" in capsys.readouterr().out
    # --all: the verdict beside a refused match too (no spec: the block size is unknown)
    nospec = tmp_path / "nospec.cu"
    source = read_source(SIGMOID)
    nospec.write_bytes(source[source.index(b"*/") + 3:])
    assert main(["list", str(nospec), "--skills", str(folder), "--all"]) == 0
    out = capsys.readouterr().out
    assert "add_launch_bounds (measured faster) (" in out and "not applicable" in out


# --------------------------------------------------------------------------------------
# The cache


def test_second_run_spends_no_trial(tmp_path: Path) -> None:
    cache = str(tmp_path / "gate-cache")
    first_gate = FakeGate({"__expf": 1.3, "__launch_bounds__(512)": 1.05})
    first = run(first_gate, cache_dir=cache, use_cache=True)
    assert first.trials_used > 1 and first.cache_hits == 0
    again_gate = FakeGate({"__expf": 1.3, "__launch_bounds__(512)": 1.05})
    again = run(again_gate, cache_dir=cache, use_cache=True)
    assert again.trials_used == 0
    assert again.cache_hits == first.trials_used
    # only the independent re-verification ran (explicit seeds are never cached)
    assert len(again_gate.calls) == 1 and again_gate.calls[0]["seeds"]
    assert again.source == first.source and again.verified


def test_record_json_round_trip() -> None:
    rec = FakeGate({"__expf": 1.3})(b"__expf", "k.cu", reference=b"expf", reference_path="k.cu")
    back = record_from_json(json.loads(json.dumps(rec.to_json())))
    assert back.to_json() == rec.to_json() and back.passed


def test_cache_keeps_only_decided_records(tmp_path: Path) -> None:
    cache = GateCache.open(tmp_path / "c")
    rec = FakeGate({})(b"x", "k.cu")
    key = cache_key(b"x", None, "sm_90", ("compile",), "1", None)
    assert cache.put(key, rec) and cache.get(key) is not None
    rec.verdict = "compiled"  # no GPU: decides nothing, must run again on one
    key2 = cache_key(b"y", None, "sm_90", ("compile",), "1", None)
    assert not cache.put(key2, rec) and cache.get(key2) is None
    assert cache_key(b"x", None, "sm_90", ("compile",), "1", "NVIDIA H100") != key
    # a damaged entry reads as a miss
    next((tmp_path / "c").glob("*/*.json")).write_text("{not json")
    assert cache.get(key) is None


# --------------------------------------------------------------------------------------
# Without a GPU: the real static path


def test_sigmoid_without_gpu_lists_compile_clean_candidates() -> None:
    result = optimize(read_source(SIGMOID), str(SIGMOID), OptimizeOptions(
        gpu=False, arch="sm_90", skills=_skills()))
    assert result.mode == "static" and not result.changed and not result.verified
    assert result.trials_used == 0 and not result.steps
    got = {(c["skill"], tuple(c["values"].items())) for c in result.static_candidates}
    assert got == {("add_launch_bounds", (("threads", "256"),)), ("precise_exp_to_fast", ())}
    for c in result.static_candidates:
        assert c["gate"]["verdict"] == "compiled"  # the real gate: compiled, not verified
        assert c["resources"]["registers"] > 0 and c["resources"]["threads_per_block"] == 256
    assert "cannot verify or time" in result.notes[0]
    data = result.to_json()
    assert data["speedup"] is None and data["changed"] is False
    assert "static only" in to_markdown(result)


def test_real_library_static_path() -> None:
    """The shipped (learned, regenerated) library on sigmoid without a GPU: only properties
    that hold whatever its cards say."""
    from klc.cuda.parse import parse_bytes
    from klc.fill.trial import candidate_sites
    from klc.pipeline import spec_of
    from klc.rule import RuleSet, default_skill_dirs

    library = {r.name: r for r in list(RuleSet.load(default_skill_dirs()).rules)}
    result = optimize(read_source(SIGMOID), str(SIGMOID), OptimizeOptions(gpu=False, arch="sm_90"))
    assert result.mode == "static" and not result.changed and result.trials_used == 0
    for c in result.static_candidates:
        assert c["skill"] in library and library[c["skill"]].kind == "skill"
        assert library[c["skill"]].card.verdict != "slower"
        assert c["ok"] and c["gate"]["verdict"] == "compiled"  # NVRTC compiled it
    # every skill that applies is accounted for: a candidate, refused statically, skipped as
    # slower, or a note saying why no value was proposed
    unit = parse_bytes(read_source(SIGMOID), str(SIGMOID))
    applies = {s.rule.name for s in candidate_sites(unit, list(library.values()),
                                                    spec_of(unit), include_slower=True)}
    assert applies  # a block size and an expf: some skill of any library applies
    seen = {c["skill"] for c in [*result.static_candidates, *result.static_refusals,
                                 *result.skipped]}
    notes = " ".join(result.notes)
    assert all(name in seen or name in notes for name in applies)


def test_kernel_without_spec_runs_the_static_part() -> None:
    source = read_source(SIGMOID)
    source = source[source.index(b"*/") + 3:]  # the spec block removed
    result = optimize(source, "nospec.cu", OptimizeOptions(
        gpu=True, arch="sm_90", skills=_skills()))
    assert result.mode == "static" and "no klc-spec block" in result.notes[0]
    # without a spec the block size is unknown, so add_launch_bounds does not apply
    assert [c["skill"] for c in result.static_candidates] == ["precise_exp_to_fast"]
    assert result.static_candidates[0]["gate"]["verdict"] == "compiled"


def test_unverified_writes_the_first_candidate() -> None:
    result = optimize(read_source(SIGMOID), str(SIGMOID), OptimizeOptions(
        gpu=False, arch="sm_90", unverified=True, skills=_skills()))
    assert result.changed and not result.verified
    assert result.source != result.original
    assert "NOT verified" in result.notes[-1]


def test_llm_filler_missing_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "klc.fill.llm", None)  # as if not installed
    with pytest.raises(KlcError, match="LLM filler is not available"):
        optimize(read_source(SIGMOID), str(SIGMOID), OptimizeOptions(
            gpu=False, filler="llm", model="m"))


@pytest.mark.parametrize(("kw", "message"), [
    ({"budget": 0}, "at least 1"), ({"target_sol": 1.5}, "fraction"),
])
def test_bad_options(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(KlcError, match=message):
        optimize(read_source(SIGMOID), str(SIGMOID), OptimizeOptions(gpu=False, **kw))


def test_syntax_error_is_refused() -> None:
    with pytest.raises(KlcError, match=r"k\.cu:\d+:\d+"):
        optimize(b"__global__ void k(float* x) { x[0] = ; \n", "k.cu", OptimizeOptions(gpu=False))


# --------------------------------------------------------------------------------------
# The command


def _fake_gpu(monkeypatch: pytest.MonkeyPatch, gate: FakeGate) -> None:
    import klc.gate

    monkeypatch.setattr(klc.gate, "gate", gate)
    monkeypatch.setattr(klc.gate, "gpu_status", lambda: ("sm_90", ""))


def test_command_improves_writes_and_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _fake_gpu(monkeypatch, FakeGate({"__expf": 1.3}))
    out, report = tmp_path / "out.cu", tmp_path / "report.json"
    rc = main(["optimize", str(SIGMOID), "-o", str(out), "--report", str(report),
               "--no-cache", "--skills", str(SKILLS)])
    assert rc == 0
    assert b"__expf(" in out.read_bytes()
    data = json.loads(report.read_text())
    assert data["verified"] and data["steps"][0]["skill"] == "precise_exp_to_fast"
    assert data["usage"]["filler"] == "search" and data["trials_used"] >= 2
    assert "improved, verified" in capsys.readouterr().out


def test_command_nothing_improved_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    _fake_gpu(monkeypatch, FakeGate({}))
    report = tmp_path / "r.md"
    kernel = tmp_path / "k.cu"
    kernel.write_bytes(read_source(SIGMOID))
    rc = main(["optimize", str(kernel), "--in-place", "--report", str(report), "--no-cache",
               "--skills", str(SKILLS)])
    assert rc == 1
    assert kernel.read_bytes() == read_source(SIGMOID)  # nothing written
    assert "**not changed**" in report.read_text()


def test_command_without_gpu_json(monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    import klc.gate

    monkeypatch.setattr(klc.gate, "gpu_status", lambda: (None, "no GPU (test)"))
    rc = main(["optimize", str(SIGMOID), "--json", "--skills", str(SKILLS)])
    assert rc == 1
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "static" and len(data["static_candidates"]) == 2


@pytest.mark.parametrize("argv", [
    ["--report", "r.txt"], ["-o", "/no/such/folder/x.cu"], ["--budget", "0"],
    ["--model", "m"], ["--filler", "nope"],
])
def test_command_bad_input(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        rc = main(["optimize", str(SIGMOID), *argv])
    except SystemExit as e:  # argparse's own refusal (unknown choice)
        rc = e.code  # type: ignore[assignment]
    assert rc == 2
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err


# --------------------------------------------------------------------------------------
# On a GPU


@pytest.mark.gpu
def test_optimize_sigmoid_on_the_gpu(tmp_path: Path) -> None:
    """The real loop, gate and re-verification: the result is verified and not slower than
    the original by more than the noise."""
    source = read_source(SIGMOID)
    result = optimize(source, str(SIGMOID), OptimizeOptions(
        budget=8, cache_dir=str(tmp_path / "gate")))
    assert result.mode == "gpu" and result.baseline and result.baseline["verdict"] == "passed"
    assert result.trials_used <= 8
    for t in result.trials:
        assert t.verdict in ("passed", "failed")
    if result.changed:
        assert result.verified
        assert result.reverify and result.reverify["verdict"] == "passed"
        fresh = set(result.reverify["stages"]["verify"]["seeds"])
        for t in result.trials:
            assert t.verdict != "passed" or t.speedup  # every passing trial was timed
        assert fresh and not fresh & {s for t in result.trials for s in t.seeds or ()}
        noise = max(0.02, result.final["noise"] or 0)
        assert result.final["speedup"] > 1 + noise
    else:
        assert result.source == source
    # a second run finds every trial of the first in the cache. A cache hit costs no trial,
    # so where the first run stopped because its budget was spent, the second goes further
    again = optimize(source, str(SIGMOID), OptimizeOptions(
        budget=8, cache_dir=str(tmp_path / "gate")))
    first = [(t.skill, t.site, sorted(t.values.items())) for t in result.trials
             if t.outcome != "baseline"]
    hits = [(t.skill, t.site, sorted(t.values.items())) for t in again.trials if t.cached]
    assert all(t in hits for t in first), (first, hits)
    assert again.cache_hits >= len(first)
    if "budget" not in result.stop_reason:
        assert again.trials_used == 0


# --------------------------------------------------------------------------------------
# History: a trial is evidence about the version it ran on

TILED = b"""/* klc-spec
kernel: tiled
sizes: {n: 1024}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: y, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 32)"]
block: [32]
*/
__global__ void tiled(const float* x, float* y, int n) {
    __shared__ float tile[32][32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = x[i];
    }
}
"""

TILE_SKILLS = '''
rule pad_tile {
  kind: skill
  description: "pad the tile (only pays once the tile is used)"
  context: any
  anchor: ```
    __shared__ $T $TILE[$A][$B];
  ```
  guard: same_text($A, $B)
  rewrite replace: ```
    __shared__ $T $TILE[$A][$B + 1];
  ```
  card {
    intent: "test"
    effect: "measured: 2.0x on H200"
  }
}

rule use_tile {
  kind: skill
  description: "stage the copy through the tile"
  context: any
  anchor: ```
    y[i] = x[i];
  ```
  rewrite replace: ```
    tile[0][threadIdx.x] = x[i];
    y[i] = tile[0][threadIdx.x];
  ```
  card {
    intent: "test"
    effect: "measured: 1.5x on H200"
  }
}
'''


class TileGate(FakeGate):
    """Padding is neutral while the tile is unused, and 1.6x once it is used; a candidate
    with ``[32 + 1 + 1]`` (padded twice) fails verify."""

    def time_of(self, source: bytes) -> float:
        t = super().time_of(source)
        if b"[32 + 1]" in source and b"tile[0][threadIdx.x] =" in source:
            t /= 1.6
        return t


def test_neutral_candidate_is_retried_once_its_function_changed(tmp_path: Path) -> None:
    path = tmp_path / "tile.rule"
    path.write_text(TILE_SKILLS)
    gate = TileGate({"tile[0][threadIdx.x] =": 1.5})
    result = run(gate, source=TILED, skills=load_rules(path))
    tries = [(t.round, t.skill, t.outcome) for t in result.trials]
    # round 1: padding is neutral on the original, staging improves and is kept; round 2:
    # padding is tried again (the function changed) and is now the win
    assert tries[1:] == [(1, "pad_tile", "neutral"), (1, "use_tile", "improved"),
                         (2, "pad_tile", "improved")]
    assert [s.skill for s in result.steps] == ["use_tile", "pad_tile"]
    assert result.speedup == pytest.approx(1.5 * 1.6)
    assert result.trials_used == 4  # the baseline and three trials: one retry, no more


TWO_KERNELS = b"""/* klc-spec
kernel: tiled
sizes: {n: 1024}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: y, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 32)"]
block: [32]
*/
__global__ void other(const float* x, float* y, int n) {
    int i = threadIdx.x;
    if (i < n) {
        y[i] = x[i];
    }
}

__global__ void tiled(const float* x, float* y, int n) {
    __shared__ float tile[32][32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = 2.0f * x[i];
    }
}
"""


def test_neutral_candidate_is_not_retried_when_its_function_did_not_change(
        tmp_path: Path) -> None:
    path = tmp_path / "tile.rule"
    path.write_text(TILE_SKILLS.replace("tile[0][threadIdx.x] = x[i];", "float v = x[i];")
                    .replace("y[i] = tile[0][threadIdx.x];", "y[i] = v;"))
    gate = TileGate({"float v = x[i];": 1.5})
    result = run(gate, source=TWO_KERNELS, skills=load_rules(path))
    assert [s.skill for s in result.steps] == ["use_tile"]
    # the accepted step changed `other`, not `tiled`: padding `tiled` is not paid for again
    assert [t.skill for t in result.trials[1:]] == ["pad_tile", "use_tile"]
    assert result.stop_reason == "no skill has anything left to try"


def test_failed_candidate_stays_excluded_while_its_site_is_the_same(tmp_path: Path) -> None:
    path = tmp_path / "tile.rule"
    path.write_text(TILE_SKILLS)
    gate = TileGate({"tile[0][threadIdx.x] =": 1.5}, fail=["[32 + 1]"])
    result = run(gate, source=TILED, skills=load_rules(path))
    assert [(t.skill, t.outcome) for t in result.trials[1:]] == [
        ("pad_tile", "failed"), ("use_tile", "improved")]
    assert result.stop_reason == "no skill has anything left to try"
