"""``kernel_tail(region)``: the region ends its kernel's body, at the top level, and no
return or goto comes before its end, so every thread of the block runs it and nothing after
it (tile_transpose puts a barrier in it and hands elements between threads)."""

from __future__ import annotations

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites
from klc.rule.ruleset import load_rules_text

PROBE = """
rule probe {
  kind: skill
  anchor: ```
    if ($I < $N) {
        $Y[$I] = $X[$I];
    }
  ```
  guard: kernel_tail(anchor)
  rewrite replace: ```
    if ($I < $N) {
        $Y[$I] = $X[$I];
    }
  ```
}
"""

HEAD = "__global__ void k(const float* x, float* y, int n) {\n    int i = threadIdx.x;\n"
COPY = "    if (i < n) {\n        y[i] = x[i];\n    }\n"


def verdict(source: str) -> tuple[bool, str]:
    sites = find_sites(parse_bytes(source.encode(), "k.cu"), load_rules_text(PROBE, "p.rule"))
    assert len(sites) == 1
    return sites[0].ok, sites[0].reason


def test_the_last_statement_of_the_kernel_is_its_tail() -> None:
    ok, _ = verdict(HEAD + COPY + "    // done\n}\n")
    assert ok


def test_a_statement_after_it_is_refused() -> None:
    ok, reason = verdict(HEAD + COPY + "    y[0] += 1.0f;\n}\n")
    assert not ok
    assert "`y[0] += 1.0f;` (k.cu:6:5) follows the anchor" in reason
    assert "does not end the kernel" in reason


def test_a_return_before_it_is_refused() -> None:
    ok, reason = verdict(HEAD + "    if (i == 3) return;\n" + COPY + "}\n")
    assert not ok
    assert "`return;` (k.cu:3:17) comes before the end of the anchor" in reason


def test_under_a_branch_it_is_not_the_tail() -> None:
    ok, reason = verdict(HEAD + "    if (n > 4) {\n" + COPY + "    }\n}\n")
    assert not ok
    assert "is not at the top level of `k`'s body" in reason


def test_outside_a_kernel_it_is_refused() -> None:
    ok, reason = verdict(HEAD.replace("__global__", "__device__") + COPY + "}\n")
    assert not ok
    assert "is not inside a kernel" in reason


ENDS = PROBE.replace("kernel_tail(anchor)", "ends_kernel(anchor)")


def ends(source: str) -> tuple[bool, str]:
    sites = find_sites(parse_bytes(source.encode(), "k.cu"), load_rules_text(ENDS, "p.rule"))
    assert len(sites) == 1
    return sites[0].ok, sites[0].reason


def test_ends_kernel_takes_a_return_before_it() -> None:
    """ends_kernel is kernel_tail without the return check: a loop that advances the index
    adds no barrier, so threads that left early change nothing."""
    ok, _ = ends(HEAD + "    if (i == 3) return;\n" + COPY + "}\n")
    assert ok
    ok, reason = ends(HEAD + COPY + "    y[0] += 1.0f;\n}\n")
    assert not ok and "does not end the kernel" in reason
    ok, reason = ends(HEAD + "    if (n > 4) {\n" + COPY + "    }\n}\n")
    assert not ok and "is not at the top level" in reason
