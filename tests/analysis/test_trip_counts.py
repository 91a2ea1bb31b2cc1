"""Trip counts in closed form are the counts of running the loop: ``_iterations`` against a
plain run of ``for (i = lo; i op hi; i = i kind k)`` on many headers, and
``trip_count_known`` on loops whose count is large or never reached."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import klc.analysis.loops as loops
from klc import plugins
from klc.analysis.constants import COMPARISONS
from klc.cuda.parse import parse_bytes
from klc.guards import GuardContext, evaluate
from klc.match import find_matches, pattern_of
from klc.rule import load_rules_text, parse_guard

BOUND = 300  # a small MAX_TRIPS, so that the plain run ends quickly


def _run(lo: int, op: str, hi: int, kind: str, k: int) -> int | None:
    count, i = 0, lo
    while COMPARISONS[op](i, hi):
        count += 1
        if count > BOUND:
            return None
        i = i + k if kind == "+" else i * k if kind == "*" else i >> k if kind == ">>" \
            else i << k
    return count


@settings(max_examples=1500, deadline=None)
@given(st.integers(-2 * BOUND, 2 * BOUND), st.sampled_from(["<", "<=", ">", ">=", "!="]),
       st.integers(-2 * BOUND, 2 * BOUND), st.sampled_from(["+", "*", ">>", "<<"]),
       st.integers(-7, 7))
def test_the_closed_form_counts_what_the_loop_runs(lo: int, op: str, hi: int, kind: str,
                                                   k: int) -> None:
    if (kind == "*" and k in (0, 1)) or (kind == "+" and k == 0) \
            or (kind in (">>", "<<") and k < 0):  # (headers _step never gives)
        return
    old = loops.MAX_TRIPS
    loops.MAX_TRIPS = BOUND
    try:
        got = loops._iterations(lo, op, hi, kind, k)
    finally:
        loops.MAX_TRIPS = old
    assert (got if got is not None and got <= BOUND else None) == _run(lo, op, hi, kind, k)


KERNEL = b"""\
__global__ void k(float* x) {
  for (int i = 0; i < 1048576; i += 1) { x[i] = 0.f; }
  for (int i = 0; i < 1048577; ++i) { x[i] = 0.f; }
  for (int i = 3; i != 100; i += 2) { x[i] = 0.f; }
  for (int i = 100; i >= -7; i -= 3) { x[i] = 0.f; }
  for (int i = 1; i < 4096; i *= 2) { x[i] = 0.f; }
  for (int i = 64; i > 0; i >>= 0) { x[i] = 0.f; }
}
"""


def test_trip_count_known_on_large_and_endless_loops() -> None:
    plugins.load()
    rule = load_rules_text("""rule loops {
  kind: skill
  description: "each loop"
  anchor: ```for ($I; $C; $U) $BODY```
  guard: trip_count_known(anchor)
  rewrite replace: ```for ($I; $C; $U) $BODY```
}
""", "t.rule")[0]
    unit = parse_bytes(KERNEL, "k.cu")
    said = []
    for m in find_matches(pattern_of(rule), unit):
        verdict = evaluate(parse_guard("trip_count_known(anchor)"),
                           GuardContext(m, {}, None, False))
        said.append(verdict.reason if not verdict.ok else verdict.reason.split(" runs ")[1])
    assert said[0] == "1048576 iterations"
    assert "more than a million iterations" in said[1]
    assert "more than a million iterations" in said[2]  # (3, 5, ... never equals 100)
    assert said[3] == "36 iterations"
    assert said[4] == "12 iterations"
    assert "more than a million iterations" in said[5]
