"""Substituted code keeps its meaning: an expression put into a rewrite template is
parenthesised where the template's operators would take it apart (``x * ?h`` with
``?h = a + b`` is ``x * (a + b)``, not ``x * a + b``), and only there."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cli import main
from klc.cuda.parse import parse_bytes
from klc.pipeline import apply_rules
from klc.rule import load_rules_text

ROOT = Path(__file__).resolve().parents[2]

HOLE_RULE = """
rule scale {
  kind: skill
  anchor: ```
    y[$I] = $X;
  ```
  rewrite replace: ```
    y[$I] = $X * ?h;
  ```
  hole h: expr
}
"""

KERNEL = b"""\
__global__ void k(float* y, const float* x, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = x[i];
}
"""


def scaled(value: str, rule: str = HOLE_RULE, src: bytes = KERNEL) -> str:
    out = apply_rules(parse_bytes(src, "k.cu"), load_rules_text(rule, "r.rule"), {"h": value})
    assert out.changed
    return out.source.decode()


@pytest.mark.parametrize(("value", "written"), [
    ("a + b", "x[i] * (a + b)"),
    ("a < b ? a : b", "x[i] * (a < b ? a : b)"),
    ("a = b", "x[i] * (a = b)"),
    ("-a", "x[i] * -a"),               # a prefix operator binds tighter than `*`
    ("a * b", "x[i] * (a * b)"),       # the right operand of a left-associative operator
    ("a", "x[i] * a"),                 # primary values are written as they are
    ("fmaxf(a, b)", "x[i] * fmaxf(a, b)"),
    ("x[i + 1]", "x[i] * x[i + 1]"),
    ("(a + b)", "x[i] * (a + b)"),
    ("2.5f", "x[i] * 2.5f"),
])
def test_expr_hole_value_is_parenthesised_in_an_operand_slot(value: str, written: str) -> None:
    assert f"y[i] = {written};" in scaled(value)


def test_expr_hole_value_is_not_parenthesised_where_it_is_a_whole_expression() -> None:
    rule = HOLE_RULE.replace("y[$I] = $X * ?h;", "y[$I] = f($X, ?h) + ?h;\n    y[?h] = ?h;")
    out = scaled("a + b", rule)
    assert "y[i] = f(x[i], a + b) + (a + b);" in out
    assert "y[a + b] = a + b;" in out


def test_a_negative_int_hole_is_not_pasted_into_an_operator() -> None:
    rule = """
rule shift {
  kind: skill
  anchor: ```
    y[$I] = $X;
  ```
  rewrite replace: ```
    y[$I] = $X -?k + ?k;
  ```
  hole k: int in -8..8 default 1
}
"""
    out = apply_rules(parse_bytes(KERNEL, "k.cu"), load_rules_text(rule, "r.rule"), {"k": "-4"})
    assert "y[i] = x[i] -(-4) + -4;" in out.source.decode()


METAVAR_RULE = """
rule twice {
  kind: skill
  anchor: ```
    y[$I] = $E;
  ```
  rewrite replace: ```
    y[$I] = $E * 2 + 1 - $E;
  ```
}
"""


@pytest.mark.parametrize(("bound", "written"), [
    ("a + b", "(a + b) * 2 + 1 - (a + b)"),
    ("a * b", "a * b * 2 + 1 - a * b"),           # `*` binds tighter than `+` and `-`
    ("a - b", "(a - b) * 2 + 1 - (a - b)"),
    ("a > b ? a : b", "(a > b ? a : b) * 2 + 1 - (a > b ? a : b)"),
    ("x[i]", "x[i] * 2 + 1 - x[i]"),
])
def test_metavariable_binding_is_parenthesised_in_an_operand_slot(bound: str,
                                                                  written: str) -> None:
    src = KERNEL.replace(b"y[i] = x[i];", f"y[i] = {bound};".encode())
    out = apply_rules(parse_bytes(src, "k.cu"), load_rules_text(METAVAR_RULE, "r.rule"))
    assert f"y[i] = {written};" in out.source.decode()


def test_pass_devectorize_keeps_an_offset_pointer_whole() -> None:
    """The pass writes `$X[4 * ($I) + 0]`: with $X bound to `x + 4` that must index the
    offset pointer, not add 4 to an element of a literal."""
    from klc.rule import RuleSet

    (rule,) = [r for r in RuleSet.load([str(ROOT / "passes/devectorize.rule")]).rules
               if r.name == "devectorize_float4_load"]
    src = (b"__global__ void k(const float* x, float* y) {\n"
           b"    float4 v = reinterpret_cast<const float4*>(x + 4)[threadIdx.x];\n"
           b"    y[threadIdx.x] = v.x;\n}\n")
    out = apply_rules(parse_bytes(src, "k.cu"), [rule]).source.decode()
    assert ("make_float4((x + 4)[4 * (threadIdx.x) + 0], (x + 4)[4 * (threadIdx.x) + 1], "
            "(x + 4)[4 * (threadIdx.x) + 2], (x + 4)[4 * (threadIdx.x) + 3])") in out


def test_cli_hole_value_is_parenthesised(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    kernel, rule = tmp_path / "k.cu", tmp_path / "r.rule"
    kernel.write_bytes(KERNEL)
    rule.write_text(HOLE_RULE)
    assert main(["apply", str(rule), str(kernel), "--hole", "h=a + b"]) == 0
    assert "+    y[i] = x[i] * (a + b);" in capsys.readouterr().out


SHIFT_RULE = """
rule shift {
  kind: skill
  anchor: ```
    $T / 32
  ```
  rewrite replace: ```
    $T >> 5
  ```
}
"""


@pytest.mark.parametrize(("code", "written"), [
    ("y[a + t / 32] = 0;", "y[a + (t >> 5)] = 0;"),   # `+` binds tighter than `>>`
    ("y[t / 32] = 0;", "y[t >> 5] = 0;"),             # a whole index needs none
    ("int w = t / 32;", "int w = t >> 5;"),
    ("y[(t / 32) * 2] = 0;", "y[(t >> 5) * 2] = 0;"),  # its own parentheses are the code's
    ("y[0] = t / 32 < a;", "y[0] = t >> 5 < a;"),     # `>>` binds tighter than `<`
])
def test_a_replaced_expression_keeps_the_meaning_of_the_code_around_it(code: str,
                                                                         written: str) -> None:
    src = (b"__global__ void k(int* y, int t, int a) {\n    " + code.encode() + b"\n}\n")
    out = apply_rules(parse_bytes(src, "k.cu"), load_rules_text(SHIFT_RULE, "r.rule"))
    assert out.changed and written in out.source.decode(), out.source.decode()
