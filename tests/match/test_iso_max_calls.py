"""max_idiom between two call spellings (``m = fmaxf(m, a)`` / ``m = max(a, m)``): each reads
``a`` once, so ``a`` may call (a warp shuffle); the if and ?: spellings read it twice and keep
asking for a pure ``a``."""

from __future__ import annotations

import pytest

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites
from klc.rule import load_rules_text

RULE = ('rule r {\n  kind: skill\n  description: "t"\n  context: any\n'
        "  anchor: ```\n$M = fmaxf($M, __shfl_down_sync($K, $M, $O));\n  ```\n"
        "  rewrite replace: ```\n$M = fmaxf($M, __shfl_down_sync($K, $M, $O));\n  ```\n}\n")


def sites(stmt: str, decl: str = "float m = x[threadIdx.x];") -> list[str]:
    code = (f"__global__ void k(const float* x, float* y) {{\n    {decl}\n"
            f"    for (int o = 16; o > 0; o >>= 1) {{\n        {stmt}\n    }}\n"
            "    y[threadIdx.x] = m;\n}\n")
    unit = parse_bytes(code.encode(), "k.cu")
    return [s.match.bindings["M"].text for s in find_sites(
        unit, load_rules_text(RULE, "t.rule")) if s.ok]


@pytest.mark.parametrize("stmt", [
    "m = fmaxf(m, __shfl_down_sync(0xffffffff, m, o));",
    "m = fmaxf(__shfl_down_sync(0xffffffff, m, o), m);",
    "m = max(m, __shfl_down_sync(0xffffffff, m, o));",
    "m = max(__shfl_down_sync(0xffffffff, m, o), m);",
])
def test_a_shuffled_maximum_in_any_call_spelling(stmt: str) -> None:
    assert sites(stmt) == ["m"]


def test_an_int_maximum_is_not_fmaxf() -> None:
    # fmaxf would turn the int into a float: the obligation on m refuses it
    assert sites("m = max(m, __shfl_down_sync(0xffffffff, m, o));",
                 "int m = (int)x[threadIdx.x];") == []


@pytest.mark.parametrize("stmt", [
    # the ?: and if spellings read the shuffle twice (two collective calls): no match
    "m = __shfl_down_sync(0xffffffff, m, o) > m ? __shfl_down_sync(0xffffffff, m, o) : m;",
    "if (__shfl_down_sync(0xffffffff, m, o) > m) m = __shfl_down_sync(0xffffffff, m, o);",
    # an increment inside: no match
    "m = max(m, __shfl_down_sync(0xffffffff, m, o++));",
])
def test_spellings_that_read_or_change_more_are_not_taken(stmt: str) -> None:
    assert sites(stmt) == []
