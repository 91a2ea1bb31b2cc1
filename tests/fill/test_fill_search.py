"""The search filler: domains enumerated and ranked (default, the card's values, then by
closeness), static refusals (a guard that fails for a value, a value that does not compile, a
launch bound below the block), open holes, and the sampler for large domains."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.fill import FillRequest, Trial
from klc.fill.card import card_values
from klc.fill.search import SearchFiller, ranked_assignments, ranked_values
from klc.fill.trial import candidate_sites
from klc.pipeline import Site, spec_of
from klc.rule.model import Rule
from klc.rule.ruleset import load_rules

ROOT = Path(__file__).resolve().parents[2]
SIGMOID = ROOT / "bench" / "examples" / "sigmoid.cu"
# fixed skills written for the tests, whose cards the tests control (not the learned library)
SKILLS = ROOT / "tests" / "data" / "skills"

SPEC = """/* klc-spec
kernel: rows
sizes: {n: 4096}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: y, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 128)"]
block: [128]
*/
"""

KERNEL = SPEC + """__global__ void rows(const float* x, float* y, int n) {
    const int row = blockIdx.x * 4 + threadIdx.x / 32;
    float v = x[row];
    if (row < n) {
        y[row] = expf(v);
    }
}
"""

RULES = '''
rule match_warps {
  kind: skill
  description: "a rewrite that is only sound when ?warps equals the constant"
  context: global
  anchor: ```
    const int $ROW = blockIdx.x * $W + threadIdx.x / 32;
  ```
  guard: equals($W, ?warps)
  rewrite replace: ```
    const int $ROW = blockIdx.x * ?warps + (threadIdx.x >> 5);
  ```
  hole warps: int in {2, 4, 8, 16} default 2
  card {
    intent: "test"
  }
}

rule retype {
  kind: skill
  description: "declare the value with another type"
  context: any
  anchor: ```
    float $V = $E;
  ```
  rewrite replace: ```
    ?T $V = $E;
  ```
  hole T: enum {notatype, double, float} default notatype
  card {
    intent: "test"
  }
}

rule tuned_exp {
  kind: skill
  description: "two numeric holes that change nothing the kernel computes"
  context: any
  anchor: ```
    expf($X)
  ```
  rewrite replace: ```
    expf($X + (float)(?a - ?a) + (float)(?b - ?b))
  ```
  hole a: int in 1..20 default 1
  hole b: int in 1..20 default 1
  card {
    intent: "test"
    effect: "measured: 1.25x on H200 with ?a = 7 and b = 3, n=2^24, block 256"
  }
}

rule open_code {
  kind: skill
  description: "an open hole without a default"
  context: any
  anchor: ```
    expf($X)
  ```
  rewrite replace: ```
    ?body
  ```
  hole body: expr
  card {
    intent: "test"
  }
}
'''


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def rules(tmp_path: Path) -> dict[str, Rule]:
    path = tmp_path / "test.rule"
    path.write_text(RULES)
    return {r.name: r for r in load_rules(path)}


def fixed_skill(name: str) -> Rule:
    from klc.rule.ruleset import RuleSet

    return next(r for r in RuleSet.load([SKILLS]).rules if r.name == name)


def site_of(source: bytes, rule: Rule, path: str = "k.cu") -> tuple[Site, object]:
    unit = parse_bytes(source, path)
    sites = candidate_sites(unit, [rule], spec_of(unit))
    assert sites, f"{rule.name} does not apply"
    return sites[0], unit


def request(rule: Rule, source: bytes = KERNEL.encode(), budget: int = 30,
            history: list[Trial] | None = None) -> FillRequest:
    site, unit = site_of(source, rule)
    return FillRequest(rule, site, unit, spec_of(unit), history=history or [], budget=budget)


def test_ranked_values_default_then_card_then_closeness(rules: dict[str, Rule]) -> None:
    rule = rules["tuned_exp"]
    # "1.25x", "2^24" and "256" are not values of ?a; "?a = 7" is, and so is "b = 3" for ?b
    assert card_values(rule, "a", rule.holes["a"])[0] == "7"
    assert card_values(rule, "b", rule.holes["b"])[0] == "3"
    a = ranked_values(rule, "a", rule.holes["a"])
    assert a[:2] == ["1", "7"]
    assert sorted(a, key=int) == [str(v) for v in range(1, 21)]  # the whole domain, once
    # then by closeness in log2 to 1 or 7: 6 and 8 before 12, 12 before 20
    assert a.index("6") < a.index("12") < a.index("20")
    assert a.index("8") < a.index("12")
    warps = rules["match_warps"]
    assert ranked_values(warps, "warps", warps.holes["warps"]) == ["2", "4", "8", "16"]


def test_assignments_rank_by_sum_of_ranks(rules: dict[str, Rule]) -> None:
    head = ranked_assignments(rules["tuned_exp"], limit=3)
    assert head[0] == {"a": "1", "b": "1"}
    assert {"a": "7", "b": "1"} in head[1:] and {"a": "1", "b": "3"} in head[1:]
    full = ranked_assignments(rules["match_warps"])
    assert [v["warps"] for v in full] == ["2", "4", "8", "16"]


def test_guard_that_fails_for_a_value_refuses_it(rules: dict[str, Rule]) -> None:
    rule = rules["match_warps"]
    filler = SearchFiller(arch="sm_90")
    got = filler.propose(request(rule), 10)
    assert got == [{"warps": "4"}]  # equals($W, ?warps) holds only for the kernel's 4
    assert filler.strategy == "exhaustive"
    refused = {c.values["warps"]: c for _, c in filler.refusals}
    assert set(refused) == {"2", "8", "16"}
    assert all(c.stage == "guard" and f"not 4 == {w}" in c.reason for w, c in refused.items())


def test_value_that_does_not_compile_is_refused(rules: dict[str, Rule]) -> None:
    rule = rules["retype"]
    filler = SearchFiller(arch="sm_90")
    got = filler.propose(request(rule), 3)
    assert got == [{"T": "double"}]
    refused = {c.values["T"]: c for _, c in filler.refusals}
    assert refused["notatype"].stage == "compile"  # the default, refused by NVRTC
    assert "notatype" in refused["notatype"].reason
    assert refused["float"].reason == "the rewrite changes nothing"


def test_launch_bounds_below_the_block_are_refused() -> None:
    rule = fixed_skill("add_launch_bounds")
    assert card_values(rule, "threads", rule.holes["threads"]) == ["256"]  # the premise
    source = read_source(SIGMOID)
    filler = SearchFiller(arch="sm_90")
    site, unit = site_of(source, rule, str(SIGMOID))
    got = filler.propose(FillRequest(rule, site, unit, spec_of(unit), budget=30), 10)
    assert [v["threads"] for v in got] == ["256", "512", "1024"]  # default first
    reasons = {c.values["threads"]: c.reason for _, c in filler.refusals}
    assert set(reasons) == {"64", "128"}
    assert "below the launch's 256 threads" in reasons["64"]


def test_history_is_never_proposed_again(rules: dict[str, Rule]) -> None:
    rule = rules["match_warps"]
    kernel = KERNEL.replace("* 4 +", "* w +").replace("void rows(", "void rows(int w, ")
    filler = SearchFiller(arch="sm_90", static=False)  # w is not a constant
    history = [Trial({"warps": "2"}, True, 1.0), Trial({"warps": "8"}, False, None, "failed")]
    got = filler.propose(request(rule, source=kernel.encode(), history=history), 5)
    assert got == [{"warps": "4"}, {"warps": "16"}]
    history += [Trial(v, True, 1.0) for v in got]
    assert filler.propose(request(rule, source=kernel.encode(), history=history), 5) == []
    assert "tried or refused" in filler.last_reason


def test_rule_without_holes_is_proposed_once() -> None:
    rule = fixed_skill("precise_exp_to_fast")
    source = read_source(SIGMOID)
    site, unit = site_of(source, rule, str(SIGMOID))
    filler = SearchFiller(arch="sm_90")
    req = FillRequest(rule, site, unit, spec_of(unit), budget=5)
    assert filler.propose(req, 3) == [{}]
    req.history = [Trial({}, True, 0.5)]
    assert filler.propose(req, 3) == []


def test_open_hole_without_default_says_search_cannot_fill_it(rules: dict[str, Rule]) -> None:
    filler = SearchFiller(arch="sm_90")
    assert filler.propose(request(rules["open_code"]), 3) == []
    assert "?body (expr)" in filler.last_reason and "--filler llm" in filler.last_reason


def test_large_domain_warm_up_then_tpe_learns_from_history(rules: dict[str, Rule]) -> None:
    pytest.importorskip("optuna")
    rule = rules["tuned_exp"]  # 400 assignments, budget 6: not exhaustive
    filler = SearchFiller(arch="sm_90", seed=1)
    first = filler.propose(request(rule, budget=6), 2)
    assert first == [{"a": "1", "b": "1"}, {"a": "1", "b": "3"}]  # the ranked head
    assert filler.strategy == "tpe"
    # a history where a >= 16 is fast whatever b: TPE samples the fast values of a (with
    # pairs not yet tried) far more often than chance (2 of 20 values: 0.6 of 6 draws)
    history = [Trial({"a": str(a), "b": str(b)}, True, 1.0 if a >= 16 else 3.0)
               for a in (1, 4, 16, 20) for b in (1, 3, 5)]
    history.append(Trial({"a": "2", "b": "2"}, False, None, "verify failed"))
    tried = {(t.values["a"], t.values["b"]) for t in history}
    for seed in range(5):
        got = SearchFiller(arch="sm_90", seed=seed).propose(
            request(rule, budget=6, history=history), 6)
        assert len(got) == 6 and len({(v["a"], v["b"]) for v in got}) == 6
        assert not tried & {(v["a"], v["b"]) for v in got}
        assert all(1 <= int(v["a"]) <= 20 and 1 <= int(v["b"]) <= 20 for v in got)
        assert sum(v["a"] in ("16", "20") for v in got) >= 2, (seed, got)


def test_random_fallback_without_optuna(rules: dict[str, Rule]) -> None:
    rule = rules["tuned_exp"]
    history = [Trial({"a": str(a), "b": "1"}, True, 1.0) for a in range(1, 9)]
    filler = SearchFiller(arch="sm_90", seed=3, use_optuna=False)
    got = filler.propose(request(rule, budget=4, history=history), 4)
    assert filler.strategy == "random"
    assert len(got) == 4 and len({tuple(v.items()) for v in got}) == 4
    assert not {(v["a"], v["b"]) for v in got} & {(str(a), "1") for a in range(1, 9)}
    again = SearchFiller(arch="sm_90", seed=3, use_optuna=False)
    assert again.propose(request(rule, budget=4, history=history), 4) == got  # seeded


def test_bad_value_from_elsewhere_is_refused_statically(rules: dict[str, Rule]) -> None:
    from klc.fill.trial import static_check

    req = request(rules["match_warps"])
    check = static_check(req.unit, req.site, {"warps": "3"}, req.spec, "sm_90")
    assert not check.ok and check.stage == "values" and "not in {2, 4, 8, 16}" in check.reason
    check = static_check(req.unit, req.site, {"nope": "1"}, req.spec, "sm_90")
    assert not check.ok and "no hole ?nope" in check.reason


# --------------------------------------------------------------------------------------
# Verdicts


def _verdict(rule: Rule, verdict: str, effect: tuple[str, ...] | None = None) -> Rule:
    from dataclasses import replace

    card = replace(rule.card, verdict=verdict)
    return replace(rule, card=card if effect is None else replace(card, effect=effect))


def test_slower_skill_is_never_proposed() -> None:
    rule = _verdict(fixed_skill("add_launch_bounds"), "slower")
    source = read_source(SIGMOID)
    unit = parse_bytes(source, str(SIGMOID))
    assert candidate_sites(unit, [rule], spec_of(unit)) == []
    sites = candidate_sites(unit, [rule], spec_of(unit), include_slower=True)
    assert [s.rule.name for s in sites] == ["add_launch_bounds"]
    req = FillRequest(rule, sites[0], unit, spec_of(unit), budget=30)
    filler = SearchFiller(arch="sm_90")
    assert filler.propose(req, 3) == []
    assert '"slower"' in filler.last_reason and "--include-slower" in filler.last_reason
    assert filler.usage()["static_checks"] == 0  # nothing was even checked
    filler = SearchFiller(arch="sm_90", include_slower=True)
    assert [v["threads"] for v in filler.propose(req, 3)] == ["256", "512", "1024"]


def test_site_rank_orders_by_verdict_then_speedup_then_source() -> None:
    from klc.fill.trial import site_rank

    unit = parse_bytes(read_source(SIGMOID), str(SIGMOID))
    bounds, exp = fixed_skill("add_launch_bounds"), fixed_skill("precise_exp_to_fast")

    def order(*rules: Rule) -> list[str]:
        sites = candidate_sites(unit, list(rules), spec_of(unit), include_slower=True)
        return [s.rule.name for s in sorted(sites, key=site_rank)]

    names = ["add_launch_bounds", "precise_exp_to_fast"]
    assert order(bounds, exp) == names  # same verdict, no speedup: source order
    assert order(bounds, _verdict(exp, "faster")) == names[::-1]
    assert order(_verdict(bounds, "neutral"), exp) == names[::-1]
    assert order(_verdict(bounds, "neutral"), _verdict(exp, "")) == names[::-1]
    assert order(_verdict(bounds, "slower"), _verdict(exp, "neutral")) == names[::-1]
    # the speedup decides between equal verdicts, never across them
    assert order(bounds, _verdict(exp, "unmeasured", ("measured: 1.2x on H200",))) == \
        names[::-1]
    assert order(_verdict(bounds, "faster", ("faster: 1.1x on H200",)),
                 _verdict(exp, "unmeasured", ("measured: 1.9x on H200",))) == names


def test_learned_relation_between_holes_is_never_broken() -> None:
    """rows_per_thread (learned from the transpose walk) ties its holes: ?t = ?factor * ?r
    (a tile of T rows walked R at a time in T / R steps). The filler proposes only tuples
    that keep it, with no gate trial and no static check spent on the others."""
    from klc.fill.search import relation_refusal, space_size

    rule = next(r for r in load_rules(ROOT / "skills" / "smem_tile.rule")
                if r.name == "rows_per_thread")
    assert relation_refusal(rule, {"factor": "4", "r": "8", "t": "32"}) == ""
    assert "is_product" in relation_refusal(rule, {"factor": "4", "r": "4", "t": "32"})
    assert relation_refusal(rule, {"factor": "4"}) == ""  # ?t and ?r not filled yet
    every = ranked_assignments(rule)
    assert every[0] == {"factor": "4", "r": "8", "t": "32"}  # the observed tuple first
    assert all(int(v["t"]) == int(v["factor"]) * int(v["r"]) for v in every)
    assert space_size(rule) == len(every) < 5 ** 3
    path = ROOT / "bench" / "lineages" / "transpose" / "walk" / "v05_rows_per_thread_to_one.cu"
    source = read_source(path)
    site, unit = site_of(source, rule, str(path))
    filler = SearchFiller(arch="sm_90", static=False, use_optuna=False)
    history: list[Trial] = []
    for _ in range(len(every) + 1):
        got = filler.propose(FillRequest(rule, site, unit, spec_of(unit), history=history,
                                         budget=2), 2)
        for v in got:
            assert int(v["t"]) == int(v["factor"]) * int(v["r"]), v
        history += [Trial(v, False, None, "failed") for v in got]
    assert sorted(map(str, (t.values for t in history))) == sorted(map(str, every))


def test_without_optuna_it_samples_at_random_and_says_so(
        rules: dict[str, Rule], monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "optuna", None)  # `import optuna` fails: not installed
    rule = rules["tuned_exp"]  # 400 assignments, budget 6: sampled, not exhaustive
    history = [Trial({"a": str(a), "b": "1"}, True, 1.0) for a in range(1, 9)]
    filler = SearchFiller(arch="sm_90", seed=3)
    got = filler.propose(request(rule, budget=6, history=history), 4)
    assert filler.strategy == "random" and filler.without_optuna
    assert len(got) == 4
    assert not SearchFiller(arch="sm_90", use_optuna=False).without_optuna
