"""The isomorphism ``chain_order`` (klc.match.iso): a chain of bounds checks joined by ``&&``
or ``||`` matches an anchor's chain in any order of its terms, only where every term may be
evaluated whatever the others gave (short-circuit evaluation guards the rest)."""

from __future__ import annotations

from itertools import permutations

import pytest

from klc.cuda.parse import parse_bytes
from klc.match.iso_checks import run_check
from klc.pipeline import apply_rules, find_sites
from klc.rule import load_rules_text


def rule(anchor: str, replace: str = "", extra: str = "") -> str:
    return (f'rule r {{\n  kind: skill\n  description: "t"\n  context: any\n'
            f"  anchor: ```\n{anchor}\n  ```\n{extra}"
            f"  rewrite replace: ```\n{replace or anchor}\n  ```\n}}\n")


def kernel(body: str) -> str:
    return ("__global__ void k(const float* x, float* y, const int* z, int W, int H, int C, "
            "int d) {\n    int col = threadIdx.x, row = blockIdx.y, ch = blockIdx.z;\n"
            f"{body}\n}}\n")


def sites(rule_text: str, code: str) -> list[dict[str, str]]:
    rules = load_rules_text(rule_text, "t.rule")
    unit = parse_bytes(code.encode(), "k.cu")
    return [{k: b.text for k, b in s.match.bindings.items() if not k.startswith("\0")}
            for s in find_sites(unit, rules) if s.ok]


THREE = "if ($X < W && $Y < H && $Z < C) {\n    $$$S;\n}"
TERMS = ["col < W", "row < H", "ch < C"]


@pytest.mark.parametrize("order", list(permutations(range(3))))
def test_a_three_term_chain_in_any_order(order: tuple[int, ...]) -> None:
    cond = " && ".join(TERMS[i] for i in order)
    got = sites(rule(THREE), kernel(f"if ({cond}) {{ y[col] = 1.0f; }}"))
    assert got == [{"X": "col", "Y": "row", "Z": "ch", "S": "y[col] = 1.0f;"}]


def test_a_four_term_chain_and_the_code_keeps_its_order() -> None:
    anchor = "if ($X >= 0 && $X < W && $Y >= 0 && $Y < H) {\n    $$$S;\n}"
    code = kernel("if (row < H && col >= 0 && row >= 0 && col < W) { y[col] = 1.0f; }")
    assert sites(rule(anchor), code) == [{"X": "col", "Y": "row", "S": "y[col] = 1.0f;"}]
    # a rewrite that writes the anchor's chain writes the template's order, with the code's
    # operands; one that keeps the condition (a $$$ run elsewhere) leaves the code's order
    out = apply_rules(parse_bytes(code.encode(), "k.cu"), load_rules_text(
        rule(anchor, "if ($X >= 0 && $X < W && $Y >= 0 && $Y < H) {\n    $$$S;\n    "
             "y[$X] += 1.0f;\n}"), "t.rule")).source.decode()
    assert "if (col >= 0 && col < W && row >= 0 && row < H)" in out


def test_an_or_chain_in_another_order() -> None:
    anchor = "if ($X >= W || $Y >= H || $Z >= C) return;"
    code = kernel("if (ch >= C || col >= W || row >= H) return;\ny[col] = 1.0f;")
    assert sites(rule(anchor), code) == [{"X": "col", "Y": "row", "Z": "ch"}]


@pytest.mark.parametrize("cond", [
    "ch < C && col < W && x[col] > 0.0f",      # the read is guarded by the bounds
    "ch < C && col < W && z[row] < H",
    "ch < C && d != 0 && col / d < W",         # the division is guarded by d != 0
    "ch < C && d < 32 && (col << d) < W",      # the shift by d < 32
    "ch < C && col < W && (row = 0) < H",      # an assignment
    "ch < C && col++ < W && row < H",          # an increment
    "ch < C && col < W && min(row, 4) < H",    # a call
])
def test_a_chain_whose_terms_are_not_all_safe_keeps_its_order(cond: str) -> None:
    terms = cond.split(" && ")
    anchor = "if ($A && $B && $G) {\n    $$$S;\n}"
    code = kernel(f"if ({cond}) {{ y[col] = 1.0f; }}")
    # its own order matches, binding each term in place
    assert [s["A"] for s in sites(rule(anchor), code)] == [terms[0]]
    # an anchor whose chain starts with the last term would read it first: no match
    first = "if ($G && $A && $B) {\n    $$$S;\n}"
    assert sites(rule(first.replace("$G", terms[2].replace("col", "$X")), first.replace(
        "$G", terms[2].replace("col", "$X"))), code) == []


def test_division_by_a_non_zero_constant_is_safe() -> None:
    anchor = "if ($X / 2 < W && $Y < H && $Z < C) {\n    $$$S;\n}"
    code = kernel("if (row < H && ch < C && col / 2 < W) { y[col] = 1.0f; }")
    assert len(sites(rule(anchor), code)) == 1
    zero = kernel("if (row < H && ch < C && col / 0 < W) { y[col] = 1.0f; }")
    assert sites(rule(anchor.replace("/ 2", "/ 0")), zero) == []


def test_the_check_reads_every_term_of_the_codes_chain() -> None:
    for cond, safe in [("a < n && b < m && c < k", True), ("a < n && b < m && p[0] < k", False),
                       ("a < n && b / 4 < m", True), ("a < n && b % q < m", False),
                       ("a >= n && (b >> 2) < m", True), ("a >= n && (b >> s) < m", False)]:
        unit = parse_bytes(f"void f() {{ if ({cond}) {{}} }}\n".encode(), "k.cu")
        node = unit.root.descendant_for_byte_range(*[unit.source.index(cond.encode()) + i
                                                     for i in (0, len(cond))])
        assert node is not None and node.type == "binary_expression"
        assert run_check("safe_chain", node) is safe, cond


def test_chain_order_off() -> None:
    # (an order that commutative's swap of two sides at each link does not reach)
    code = kernel("if (ch < C && col < W && row < H) { y[col] = 1.0f; }")
    assert sites(rule(THREE, extra="  isomorphisms: -chain_order\n"), code) == []
    assert len(sites(rule(THREE), code)) == 1
