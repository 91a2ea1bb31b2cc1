"""``no_jumps($$$S)``: control reaches the end of the statements. A break of a loop or switch
inside them, or a continue of a loop inside them, stays inside; a return, a goto, or a break
or continue of a loop around them leaves."""

from __future__ import annotations

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites
from klc.rule.ruleset import load_rules_text

PROBE = """
rule probe {
  kind: skill
  anchor: ```
    for (int $C = 0; $C < $N; $C++) {
        $$$S;
    }
  ```
  guard: no_jumps($$$S)
  rewrite replace: ```
    for (int $C = 0; $C < $N; $C++) {
        $$$S;
    }
  ```
}
"""

LOOPS = """__global__ void k(const float* x, float* y, int n) {
    for (int c = 0; c < n; c++) { if (x[c] < 0) continue; y[c] = 1.0f; }
    for (int c = 0; c < n; c++) { while (y[c] < x[c]) { y[c] += 1; if (y[c] > 9) continue; } }
    for (int c = 0; c < n; c++) { switch (c % 4) { case 0: continue; default: y[c] = 2.0f; } }
    for (int c = 0; c < n; c++) { switch (c % 4) { case 0: break; default: y[c] = 3.0f; } }
    for (int c = 0; c < n; c++) { do { y[c] -= 1.0f; if (y[c] < 0) break; } while (y[c] > 1); }
    for (int c = 0; c < n; c++) { if (x[c] > 8) return; y[c] = 4.0f; }
}
"""


def verdicts(source: str = LOOPS) -> list[tuple[bool, str]]:
    sites = find_sites(parse_bytes(source.encode(), "k.cu"), load_rules_text(PROBE, "p.rule"))
    return [(s.ok, s.reason) for s in sites]


def test_a_continue_of_the_loop_around_the_code_is_a_jump() -> None:
    ok, reason = verdicts()[0]
    assert not ok
    assert reason == "k.cu:2:49: continue; leaves the code early"


def test_a_continue_of_a_loop_inside_the_code_is_not() -> None:
    ok, _ = verdicts()[1]
    assert ok


def test_a_continue_in_a_switch_belongs_to_the_loop_around_it() -> None:
    ok, reason = verdicts()[2]
    assert not ok and "continue; leaves the code early" in reason


def test_a_break_of_a_switch_or_loop_inside_the_code_is_not_a_jump() -> None:
    assert [ok for ok, _ in verdicts()[3:5]] == [True, True]


def test_a_return_is_a_jump() -> None:
    ok, reason = verdicts()[5]
    assert not ok and "return; leaves the code early" in reason


def test_a_range_for_inside_the_code_owns_its_continue() -> None:
    src = """__global__ void k(float* y, int n) {
    for (int c = 0; c < n; c++) { float w[2] = {1, 2}; for (float v : w) { if (v) continue; } }
}
"""
    ((ok, _),) = verdicts(src)
    assert ok
