"""``stride_fits($T, $N)``: a grid-stride loop over an index of type $T cannot overflow it
(elementwise_grid_stride's guard): a 64-bit index always; a 32-bit one only where the spec
bounds N - 1 + the threads launched inside the type at every size."""

from __future__ import annotations

import pytest

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites, spec_of
from klc.rule.ruleset import load_rules_text

PROBE = """
rule probe {
  kind: skill
  anchor: ```
    $TY $I = $GIDX;
    $$$PRE;
    if ($I < $N) {
        $$$BODY;
    }
  ```
  metavar $TY: type
  guard: stride_fits($TY, $N)
  rewrite replace: ```
    $TY $I = $GIDX;
    $$$PRE;
    if ($I < $N) {
        $$$BODY;
    }
  ```
}
"""


def spec(n: int, block: int = 256) -> str:
    return (f"/* klc-spec\nkernel: k\nsizes: {{n: {n}}}\nverify_sizes:\n  - {{n: 1000}}\n"
            "args:\n  - {name: y, shape: [n], role: out}\n  - {name: n, value: n}\n"
            f"grid: [\"ceil_div(n, {block})\"]\nblock: [{block}]\n*/\n")


def verdict(head: str, typ: str, pre: str, bound: str) -> tuple[bool, str]:
    src = (f"{head}__global__ void k(float* y, {typ} n) {{\n"
           f"    {typ} i = blockIdx.x * blockDim.x + threadIdx.x;\n{pre}"
           f"    if (i < {bound}) {{\n        y[i] = 1.0f;\n    }}\n}}\n")
    unit = parse_bytes(src.encode(), "k.cu")
    sites = find_sites(unit, load_rules_text(PROBE, "p.rule"), None, spec_of(unit))
    assert len(sites) == 1
    return sites[0].ok, sites[0].reason


@pytest.mark.parametrize("typ", ["size_t", "long", "long long", "int64_t", "unsigned long"])
def test_a_64_bit_index_always_fits(typ: str) -> None:
    ok, reason = verdict("", typ, "", "n")
    assert ok, reason


def test_a_32_bit_index_needs_a_spec() -> None:
    ok, reason = verdict("", "int", "", "n")
    assert not ok and "no spec bounds `n`" in reason


@pytest.mark.parametrize(("n", "typ", "fits"), [
    (1 << 24, "int", True),
    (1 << 30, "int", True),  # (2^30 - 1) + 2^30 = 2^31 - 1: just fits
    ((1 << 30) + 256, "int", False),
    ((1 << 30) + 256, "unsigned int", True),  # an unsigned index has twice the room
    (2_100_000_000, "unsigned int", True),  # 4.2e9 < 2^32 - 1
    (2_200_000_000, "unsigned int", False),
])
def test_a_32_bit_index_by_the_spec_sizes(n: int, typ: str, fits: bool) -> None:
    ok, reason = verdict(spec(n), typ, "", "n")
    assert ok == fits, reason
    assert fits or f"past {(1 << 31) - 1 if typ == 'int' else (1 << 32) - 1}" in reason


def test_a_const_local_bound_is_read_through_its_initialiser() -> None:
    ok, reason = verdict(spec(1 << 24), "int", "    const int half = n / 2;\n", "half")
    assert ok, reason
    ok, reason = verdict(spec(1 << 24), "int", "    int half = n / 2;\n", "half")
    assert ok, reason  # set once: its initialiser bounds it too


def test_a_local_assigned_again_is_no_bound() -> None:
    ok, reason = verdict(spec(1 << 24), "int", "    int half = n / 2;\n    half += 1;\n", "half")
    assert not ok and "nor a local set once" in reason


def test_without_verify_sizes_the_gates_own_sizes_count() -> None:
    """No verify sizes: the gate derives its own (klc.spec.default_verify_sizes), never
    larger than the profiling sizes, which the predicate checks with them."""
    head = spec(1 << 24).replace("verify_sizes:\n  - {n: 1000}\n", "")
    assert "verify_sizes" not in head
    ok, reason = verdict(head, "int", "", "n")
    assert ok, reason
    ok, reason = verdict(spec(1 << 24).replace("{n: 1000}", "{n: 2100000000}"), "int", "", "n")
    assert not ok and "past 2147483647" in reason  # a verify size larger than the profile's
