"""Isomorphisms (klc.match.iso) and typed metavariables: one anchor covers the spellings
people write, only where they are equivalent, and a rule can turn each off."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cli import main
from klc.cuda.parse import parse_bytes
from klc.errors import KlcError
from klc.match.iso import ISOMORPHISMS
from klc.pipeline import apply_rules, find_sites
from klc.rule import load_rules_text
from klc.rule.model import ISOMORPHISMS as RULE_ISOMORPHISMS


def rule(anchor: str, replace: str = "", extra: str = "", name: str = "r") -> str:
    body = replace or anchor
    return (f'rule {name} {{\n  kind: skill\n  description: "t"\n  context: any\n'
            f"  anchor: ```\n{anchor}\n  ```\n{extra}"
            f"  rewrite replace: ```\n{body}\n  ```\n}}\n")


def sites(rule_text: str, code: str) -> list[dict[str, str]]:
    """The applicable sites' bindings (an obligation's type not holding is no site)."""
    rules = load_rules_text(rule_text, "t.rule")
    unit = parse_bytes(code.encode(), "k.cu")
    return [{k: b.text for k, b in s.match.bindings.items()}
            for s in find_sites(unit, rules) if s.ok]


def applied(rule_text: str, code: str) -> str:
    rules = load_rules_text(rule_text, "t.rule")
    return apply_rules(parse_bytes(code.encode(), "k.cu"), rules).source.decode()


def kernel(body: str, params: str = "const float* x, float* y, int* z, int n") -> str:
    return f"__global__ void k({params}) {{\n{body}\n}}\n"


def test_the_two_vocabularies_agree() -> None:
    assert set(ISOMORPHISMS) == set(RULE_ISOMORPHISMS)


@pytest.mark.parametrize("spelling", [
    "int i = blockIdx.x * blockDim.x + threadIdx.x;",
    "int i = threadIdx.x + blockIdx.x * blockDim.x;",
    "int i = blockDim.x * blockIdx.x + threadIdx.x;",
    "int i = threadIdx.x + blockDim.x * blockIdx.x;",
    "int i = (blockIdx.x * blockDim.x) + threadIdx.x;",
])
def test_global_index_in_any_order(spelling: str) -> None:
    r = rule("int $I = blockIdx.x * blockDim.x + threadIdx.x;")
    assert sites(r, kernel(spelling + "\ny[i] = 0.0f;")) == [{"I": "i"}]
    # commutative off: the global index is still its own isomorphism
    r2 = rule("int $I = blockIdx.x * blockDim.x + threadIdx.x;",
              extra="  isomorphisms: -commutative, -parentheses\n")
    want = [] if "(" in spelling.split("=")[1] else [{"I": "i"}]
    assert sites(r2, kernel(spelling)) == want
    r3 = rule("int $I = blockIdx.x * blockDim.x + threadIdx.x;",
              extra="  isomorphisms: -global_index, -commutative\n")
    # (parentheses is still on: the parenthesized product is still this order)
    plain = spelling.replace("(", "").replace(")", "").startswith(
        "int i = blockIdx.x * blockDim.x + threadIdx.x")
    assert bool(sites(r3, kernel(spelling))) == plain


def test_commutative_binds_the_codes_own_subtrees() -> None:
    r = rule("y[$I] = $A * $B + 1.0f;")
    got = sites(r, kernel("int i = 0;\ny[i] = 1.0f + x[i] * 2.0f;"))
    assert got == [{"I": "i", "A": "x[i]", "B": "2.0f"}]
    got = sites(r, kernel("int i = 0;\ny[i] = 1.0f + 2.0f * x[i];"))
    assert got == [{"I": "i", "A": "2.0f", "B": "x[i]"}]
    # not for a non-commutative operator
    assert sites(rule("y[$I] = $A - 1.0f;"), kernel("int i = 0;\ny[i] = 1.0f - x[i];")) == []


def test_short_circuit_operands_commute_only_when_they_read_no_memory() -> None:
    r = rule("if (i < n && $F) { $$$S; }")
    assert sites(r, kernel("int i = 0; bool f = true;\nif (f && i < n) { y[i] = 1; }"))
    # swapping would read x[i] before the bound check: no match
    assert sites(r, kernel("int i = 0;\nif (x[i] > 0 && i < n) { y[i] = 1; }")) == []


@pytest.mark.parametrize("spelling", ["if (i < n) y[i] = 1;", "if (n > i) y[i] = 1;"])
def test_comparison_mirrors(spelling: str) -> None:
    assert sites(rule("if ($I < $N) $S;"), kernel("int i = 0;\n" + spelling))


@pytest.mark.parametrize("spelling, ok", [
    ("s += x[i];", True), ("s = s + x[i];", True), ("s = x[i] + s;", True),
    ("s = s - x[i];", False),
])
def test_compound_assignment(spelling: str, ok: bool) -> None:
    code = kernel(f"float s = 0; int i = 0;\n{spelling}")
    assert bool(sites(rule("$S += $E;"), code)) == ok


def test_compound_assignment_needs_a_side_effect_free_target() -> None:
    r = rule("$A[$I] += $E;")
    assert sites(r, kernel("int i = 0;\ny[i] = y[i] + x[i];"))
    # y[i++] = y[i++] + x: two increments, not one
    assert sites(r, kernel("int i = 0;\ny[i++] = y[i++] + x[i];")) == []


@pytest.mark.parametrize("step", ["i++", "++i", "i += 1", "i = i + 1", "i = 1 + i"])
def test_loop_step_spellings(step: str) -> None:
    r = rule("for (int $C = 0; $C < $N; $C++) { $$$S; }")
    assert sites(r, kernel(f"for (int i = 0; i < n; {step}) {{ y[i] = 0; }}"))
    off = rule("for (int $C = 0; $C < $N; $C++) { $$$S; }", extra="  isomorphisms: -increment\n")
    assert bool(sites(off, kernel(f"for (int i = 0; i < n; {step}) {{ y[i] = 0; }}"))) == \
        (step == "i++")


def test_braces_and_the_bare_statement() -> None:
    braced = rule("for (int $C = 0; $C < $N; $C++) { $$$S; }")
    bare = rule("for (int $C = 0; $C < $N; $C++) $A[$C] = $V;")
    code_bare = kernel("for (int i = 0; i < n; i++) y[i] = 0;")
    code_braced = kernel("for (int i = 0; i < n; i++) { y[i] = 0; }")
    assert sites(braced, code_bare) == [{"C": "i", "N": "n", "S": "y[i] = 0;"}]
    assert sites(bare, code_braced) == [{"C": "i", "N": "n", "A": "y", "V": "0"}]
    assert sites(rule("for (int $C = 0; $C < $N; $C++) { $$$S; }",
                      extra="  isomorphisms: -braces\n"), code_bare) == []


MAX_SPELLINGS = [
    "if (x[j] > m) m = x[j];",
    "if (x[j] > m) { m = x[j]; }",
    "if (m < x[j]) m = x[j];",
    "m = fmaxf(m, x[j]);",
    "m = fmaxf(x[j], m);",
    "m = max(m, x[j]);",
    "m = x[j] > m ? x[j] : m;",
]


@pytest.mark.parametrize("spelling", MAX_SPELLINGS)
def test_max_idiom_for_float(spelling: str) -> None:
    r = rule("for (int $C = 0; $C < $N; $C++) { $M = fmaxf($M, $E); }")
    code = kernel(f"float m = -1e30f;\nfor (int j = 0; j < n; j++) {{ {spelling} }}")
    assert sites(r, code) == [{"C": "j", "N": "n", "M": "m", "E": "x[j]"}]
    off = rule("for (int $C = 0; $C < $N; $C++) { $M = fmaxf($M, $E); }",
               extra="  isomorphisms: -max_idiom, -commutative\n")
    assert bool(sites(off, code)) == (spelling == "m = fmaxf(m, x[j]);")


@pytest.mark.parametrize("decl", ["int m = 0;", "double m = 0;"])
def test_max_idiom_never_turns_an_int_or_double_into_fmaxf(decl: str) -> None:
    r = rule("for (int $C = 0; $C < $N; $C++) { $M = fmaxf($M, $E); }")
    code = kernel(f"{decl}\nfor (int j = 0; j < n; j++) {{ if (z[j] > m) m = z[j]; }}")
    assert sites(r, code) == []


def test_max_idiom_min_and_side_effects() -> None:
    r = rule("$M = fminf($M, $E);")
    assert sites(r, kernel("float m = 1e30f; int j = 0;\nm = x[j] < m ? x[j] : m;"))
    # the ternary reads x[j++] twice: not fminf(m, x[j++])
    assert sites(r, kernel("float m = 1e30f; int j = 0;\nm = x[j++] < m ? x[j++] : m;")) == []


def test_a_commuted_match_rewrites_only_its_bytes() -> None:
    r = rule("for (int $C = 0; $C < $N; $C++) {\n    $$$PRE;\n    $ACC += $E;\n}",
             "for (int $C = 0; $C < $N; $C += 2) {\n    $$$PRE;\n    $ACC += $E;\n}")
    code = kernel("float acc = 0.0f;   // keep\n"
                  "for (int i = 0; n > i; ++i) {\n"
                  "    float v = x[i] * 2.0f;  /* pre */\n"
                  "    for (int k = 0; k < 4; ++k) v += 1.0f;\n"
                  "    acc = v + acc;\n"
                  "}\n"
                  "y[0] = acc;")
    out = applied(r, code)
    assert "float acc = 0.0f;   // keep\n" in out
    # what $$$PRE skipped over keeps its spelling (++k, comments); the rest is the template
    assert ("    float v = x[i] * 2.0f;  /* pre */\n"
            "    for (int k = 0; k < 4; ++k) v += 1.0f;") in out
    assert "for (int i = 0; i < n; i += 2)" in out
    assert "acc += v;" in out
    assert out.endswith("y[0] = acc;\n}\n")


def test_pointer_rule_never_binds_a_scalar() -> None:
    r = rule("$P[$I] = $V;", extra="  metavar $P: pointer\n")
    code = kernel("int i = 0; float v[4];\ny[i] = 1.0f;\nv[i] = 2.0f;", "float* y")
    got = sites(r, code)
    assert {"P": "y", "I": "i", "V": "1.0f"} in got
    # a local array is a pointer here too (it decays); a scalar never is
    r2 = rule("$S = $V;", extra="  metavar $S: pointer\n")
    assert sites(r2, kernel("float s = 0.0f;\ns = 1.0f;")) == []


def test_int_expr_binds_only_integers() -> None:
    r = rule("$P[$I] = $V;", extra="  metavar $I: int_expr\n")
    code = kernel("int i = 0, c = 4; float f = 1.0f;\n"
                  "y[i * c + 1] = 1.0f;\ny[threadIdx.x] = 2.0f;\ny[(int)f] = 3.0f;")
    assert [s["I"] for s in sites(r, code)] == ["i * c + 1", "threadIdx.x", "(int)f"]
    r2 = rule("$S += $V;", extra="  metavar $S: int_expr\n")
    assert [s["S"] for s in sites(r2, kernel("int a = 0; float b = 0;\na += 1;\nb += 1;"))] \
        == ["a"]


def test_type_binds_a_type_specifier() -> None:
    r = rule("$T $X = $P[$I];", extra="  metavar $T: type\n")
    code = kernel("int i = 0;\nfloat a = x[i];\nunsigned int b = z[i];\nauto c = x[i];")
    assert [s["T"] for s in sites(r, code)] == ["float", "unsigned int", "auto"]


def check(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> str:
    p = tmp_path / "bad.rule"
    p.write_text(text)
    assert main(["check", str(p)]) == 2
    return capsys.readouterr().err


def test_check_reports_an_unknown_isomorphism(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    err = check(tmp_path, rule("$A += $B;", extra="  isomorphisms: -comutative\n"), capsys)
    assert "bad.rule:8:18: unknown isomorphism 'comutative' (did you mean commutative?)" in err
    err = check(tmp_path, rule("$A += $B;", extra="  isomorphisms: -braces, -braces\n"), capsys)
    assert "bad.rule:8:27: isomorphisms: -braces is given twice" in err


def test_check_reports_kind_misuse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = check(tmp_path, rule("$A += $B;", extra="  metavar $A: integer\n"), capsys)
    assert "bad.rule:8:15: unknown metavariable kind 'integer'" in err
    err = check(tmp_path, rule("{ $$$S; }", extra="  metavar $$$S: int_expr\n"), capsys)
    assert "bad.rule:8:11: metavar $$$S: a kind constrains a metavariable that binds one" in err
    err = check(tmp_path, rule("$A += $B;", extra="  metavar $A: pointer, int_expr\n"), capsys)
    assert "bad.rule:8:11: metavar $A: no code is both a pointer and an int_expr" in err


def test_isomorphisms_round_trip_through_the_printer() -> None:
    from klc.rule import rule_to_text
    r = load_rules_text(rule("$A += $B;", extra="  isomorphisms: -max_idiom, -all\n"), "t")[0]
    assert r.isos_off == ("all", "max_idiom")
    again = load_rules_text(rule_to_text(r), "t")[0]
    assert again.isos_off == r.isos_off
    with pytest.raises(KlcError):
        load_rules_text(rule("$A += $B;", extra="  isomorphisms: commutative\n"), "t")


WRAPPED = "int $R = blockIdx.x * blockDim.x + threadIdx.x;\nif ($R < $ROWS) {\n    $$$BODY;\n}"


@pytest.mark.parametrize("guard", ["if (i >= n) return;", "if (n <= i) return;",
                                   "if (!(i < n)) return;", "if (i >= n) { return; }"])
def test_early_return_is_the_wrapped_body(guard: str) -> None:
    code = kernel(f"int i = blockIdx.x * blockDim.x + threadIdx.x;\n{guard}\n"
                  "float v = x[i];\ny[i] = v * 2.0f;")
    assert sites(rule(WRAPPED), code) == [
        {"R": "i", "ROWS": "n", "BODY": "float v = x[i];\ny[i] = v * 2.0f;"}]
    out = applied(rule(WRAPPED), code)
    assert "if (i < n) {\n    float v = x[i];\n    y[i] = v * 2.0f;\n}\n}\n" in out
    assert sites(rule(WRAPPED, extra="  isomorphisms: -early_return\n"), code) == []


def test_early_return_only_at_the_end_of_a_kernel_body_and_for_integers() -> None:
    # inside a loop, return leaves the kernel, the wrapped body only the iteration
    nested = kernel("for (int r = 0; r < 4; r++) {\n"
                    "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "if (i >= n) return;\ny[i] = 1.0f;\n}\ny[0] = 0.0f;")
    assert sites(rule(WRAPPED), nested) == []
    # a float bound: !(i < f) is not i >= f for a NaN
    floaty = kernel("int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "if (i >= f) return;\ny[i] = 1.0f;", "float* y, float f")
    assert sites(rule(WRAPPED), floaty) == []
    # not the anchor's last statement: what follows the if would run for every thread
    more = rule(WRAPPED + "\ny[0] = 0.0f;")
    assert sites(more, kernel("int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                              "if (i >= n) return;\ny[i] = 1.0f;\ny[0] = 0.0f;")) == []


PRODUCT = ("if ($R < $M && $C < $N) {\n    float $S = 0.0f;\n"
           "    for (int $K = 0; $K < $KD; $K++) {\n        $S += $A[$IA] * $B[$IB];\n    }\n"
           "    $$$POST;\n}")
PRODUCT_BODY = ("float s = 0.0f;\nfor (int k = 0; k < K; k++) {\n    s += a[r * K + k] * "
                "b[k * N + c];\n}\ny[r * N + c] = s;")
PRODUCT_ARGS = "const float* a, const float* b, float* y, int M, int N, int K"
INDICES = ("int r = blockIdx.y * blockDim.y + threadIdx.y;\n"
           "int c = blockIdx.x * blockDim.x + threadIdx.x;\n")


@pytest.mark.parametrize("guard", [
    "if (r >= M || c >= N) return;", "if (r >= M || c >= N) { return; }",
    "if (M <= r || N <= c) return;", "if (c >= N || r >= M) return;",
    "if (!(r < M && c < N)) return;"])
def test_an_if_anchor_takes_the_early_return_of_a_kernel_body(guard: str) -> None:
    """An anchor that is one if statement whose body ends with a run: the kernel's rest after
    `if (!(C)) return;` (C a chain of integer comparisons joined by &&, negated by De
    Morgan) is its body; the rewrite replaces the guard and the rest."""
    code = kernel(INDICES + guard + "\n" + PRODUCT_BODY, PRODUCT_ARGS)
    found = sites(rule(PRODUCT), code)
    # (the chain's two comparisons bind in the code's order: the guards judge which is which)
    assert [({(f["R"], f["M"]), (f["C"], f["N"])}, f["POST"]) for f in found] == [
        ({("r", "M"), ("c", "N")}, "y[r * N + c] = s;")]
    out = applied(rule(PRODUCT), code)
    assert "return" not in out and "float s = 0.0f;\n    for (int k" in out
    assert sites(rule(PRODUCT, extra="  isomorphisms: -early_return\n"), code) == []


def test_an_if_anchor_takes_no_early_return_that_is_not_its_wrapped_body() -> None:
    # a float bound: !(r < f) is not r >= f for a NaN
    floaty = kernel(INDICES + "if (r >= f || c >= N) return;\n" + PRODUCT_BODY,
                    PRODUCT_ARGS + ", float f")
    assert sites(rule(PRODUCT.replace("$M", "$F")), floaty) == []
    # || in the anchor's condition: its negation is no || of negations
    either = kernel(INDICES + "if (r >= M && c >= N) return;\n" + PRODUCT_BODY, PRODUCT_ARGS)
    assert sites(rule(PRODUCT.replace("&&", "||")), either) == []
    # the guard inside a loop: return leaves the kernel, not the iteration
    looped = kernel("for (int t = 0; t < 2; t++) {\n" + INDICES
                    + "if (r >= M || c >= N) return;\n" + PRODUCT_BODY + "\n}", PRODUCT_ARGS)
    assert sites(rule(PRODUCT), looped) == []
    # a statement of the rest that the body does not hold: no match
    other = kernel(INDICES + "if (r >= M || c >= N) return;\n" + PRODUCT_BODY.replace(
        "float s = 0.0f;", "float s = 0.0f;\ns += 1.0f;"), PRODUCT_ARGS)
    assert sites(rule(PRODUCT), other) == []


WITHIN = '''rule w {
  kind: skill
  description: "t"
  context: any
  anchor: ```
    if ($I < $N) {
        $$$BODY;
    }
  ```
ISOS  rewrite within $$$BODY {
    anchor: ```
      $A = $A + $E;
    ```
    replace: ```
      $A = $A + 2.0f * $E;
    ```
  }
}
'''


def test_within_sub_anchors_follow_the_rules_isomorphisms_line() -> None:
    """The sub-anchor ``$A = $A + $E`` meets ``acc += x[i]`` through compound_assign; a rule
    that turns compound_assign off turns it off for its within blocks too."""
    code = kernel("int i = threadIdx.x;\nfloat acc = 0.0f;\nif (i < n) {\n"
                  "    acc += x[i];\n    y[i] = acc;\n}")
    on = load_rules_text(WITHIN.replace("ISOS", ""), "t.rule")
    off = load_rules_text(WITHIN.replace("ISOS", "  isomorphisms: -compound_assign\n"),
                          "t.rule")
    assert off[0].edits[0].subrules()[0].isos_off == ("compound_assign",)
    assert "acc = acc + 2.0f * x[i];" in apply_rules(parse_bytes(code.encode(), "k.cu"), on
                                                ).source.decode()
    assert apply_rules(parse_bytes(code.encode(), "k.cu"), off).source.decode() == code


@pytest.mark.parametrize(("code", "want"), [
    ("const int i = blockIdx.x * blockDim.x + threadIdx.x;", [{"I": "i"}]),
    ("const int i = threadIdx.x + blockDim.x * blockIdx.x;", [{"I": "i"}]),
    ("int i = blockIdx.x * blockDim.x + threadIdx.x;", [{"I": "i"}]),
])
def test_const_local_index(code: str, want: list[dict[str, str]]) -> None:
    r = rule("int $I = blockIdx.x * blockDim.x + threadIdx.x;")
    assert sites(r, kernel(code + "\ny[i] = 0.0f;")) == want
    off = rule("int $I = blockIdx.x * blockDim.x + threadIdx.x;",
               extra="  isomorphisms: -const_local\n")
    assert sites(off, kernel(code + "\ny[i] = 0.0f;")) == ([] if "const" in code else want)


@pytest.mark.parametrize("code", [
    "const int t = 32;",  # a constant expression: an array bound may need it
    "const float* p = x + threadIdx.x;",  # the const is the pointee's
    "const int i = threadIdx.x, j = 3;",  # a second declarator without an index
    "static int i = threadIdx.x;",
])
def test_const_local_refused(code: str) -> None:
    r = rule("int $I = $E;")
    r2 = rule("float* $P = $E;")
    assert sites(r, kernel(code)) == [] and sites(r2, kernel(code)) == []


def test_const_local_rewrite_keeps_the_rest() -> None:
    out = applied(rule("int $I = $E;", "int $I = 2 * ($E);"),
                  kernel("const int t = 32;\nconst int i = threadIdx.x * t;\ny[i] = 0.0f;"))
    # the declaration written back keeps the const it matched (the rewrite never assigns i)
    assert "const int t = 32;\nconst int i = 2 * (threadIdx.x * t);\ny[i] = 0.0f;" in out


@pytest.mark.parametrize(("code", "ty"), [
    ("const int i = blockIdx.x * blockDim.x + threadIdx.x;", "int"),
    ("int const i = blockIdx.x * blockDim.x + threadIdx.x;", "int"),
    ("const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;", "unsigned"),
    ("const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;", "unsigned int"),
    ("const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;", "long"),
    ("const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;", "size_t"),
    ("int i = blockIdx.x * blockDim.x + threadIdx.x;", "int"),
])
def test_a_type_metavariable_meets_const_locals(code: str, ty: str) -> None:
    """``$TY $I = e;`` meets a const index through const_local, ``$TY`` bound to the type
    without its const."""
    anchor = "$TY $I = $E;\ny[$I] = 0.0f;"
    r = rule(anchor, extra="  metavar $TY: type\n")
    [got] = sites(r, kernel(code + "\ny[i] = 0.0f;"))
    assert got["TY"] == ty and got["I"] == "i"
    off = rule(anchor, extra="  metavar $TY: type\n  isomorphisms: -const_local\n")
    assert len(sites(off, kernel(code + "\ny[i] = 0.0f;"))) == (0 if "const" in code else 1)


@pytest.mark.parametrize("code", [
    "const int t = 32;\ny[t] = 0.0f;",  # a constant expression: an array bound may need it
    "volatile int i = threadIdx.x;\ny[i] = 0.0f;",  # only a const is dropped
    "static const int i = 3;\ny[i] = 0.0f;",
    # tree-sitter reads `unsigned const` as one type holding the const: $TY would bind it
    "unsigned const i = threadIdx.x;\ny[i] = 0.0f;",
    "long const i = threadIdx.x;\ny[i] = 0.0f;",
])
def test_a_type_metavariable_refuses_other_qualified_locals(code: str) -> None:
    r = rule("$TY $I = $E;\ny[$I] = 0.0f;", extra="  metavar $TY: type\n")
    assert sites(r, kernel(code)) == []


STRIDE = rule("$TY $I = blockIdx.x * blockDim.x + threadIdx.x;\nif ($I < n) {\n    $$$BODY;\n}",
              "$TY $I = blockIdx.x * blockDim.x + threadIdx.x;\n"
              "for (; $I < n; $I += ($TY)blockDim.x * gridDim.x) {\n    $$$BODY;\n}",
              extra="  metavar $TY: type\n")


@pytest.mark.parametrize("decl", ["const int i", "int const i", "const unsigned i",
                                  "const long long i"])
def test_a_rewrite_that_assigns_the_const_index_declares_it_plain(decl: str) -> None:
    """A grid-stride rewrite writes ``$TY`` back and assigns ``$I``: from ``const int i``
    it writes ``int i`` (and the cast ``(int)``), which compiles, where writing the const
    back would not."""
    from klc.gate.compile import compile_unit

    code = kernel(f"{decl} = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "if (i < n) {\n    y[i] = x[i];\n}")
    out = applied(STRIDE, code)
    plain = decl.replace("const ", "").replace(" const", "")
    ty = plain[:-2]
    assert f"{plain} = blockIdx.x" in out and f"i += ({ty})blockDim.x" in out
    result = compile_unit(parse_bytes(out.encode(), "k.cu"), arch="sm_90", use_cache=False)
    assert result.ok, result.log
    # the const written back (as `unsigned const` would be) does not compile
    kept = out.replace(f"{plain} = blockIdx.x", f"{decl} = blockIdx.x")
    result = compile_unit(parse_bytes(kept.encode(), "k.cu"), arch="sm_90", use_cache=False)
    assert not result.ok


DECLS = ("    int $C = blockIdx.x * $BX + threadIdx.x;\n"
         "    int $R = blockIdx.y * $BY + threadIdx.y;\n"
         "    y[$R * n + $C] = x[$C * n + $R];")
COL = "int c = blockIdx.x * blockDim.x + threadIdx.x;"
ROW = "int r = blockIdx.y * blockDim.y + threadIdx.y;"
STORE = "y[r * n + c] = x[c * n + r];"


@pytest.mark.parametrize(("body", "want"), [
    (f"{COL}\n{ROW}\n{STORE}", [{"C": "c", "R": "r"}]),  # the anchor's order
    (f"{ROW}\n{COL}\n{STORE}", [{"C": "c", "R": "r"}]),  # the other order
    (f"{ROW}\n// the column\n{COL}\n{STORE}", [{"C": "c", "R": "r"}]),  # a comment between
    (f"{ROW}\n{COL.replace('blockDim.x', 'n')}\n{STORE}", [{"C": "c", "R": "r"}]),
    # the column reads the row: the two cannot trade places
    (f"{ROW}\n{COL.replace('blockDim.x', 'r')}\n{STORE}", []),
    # the row's initialiser calls a function, or increments (its effects would move)
    (f"{ROW.replace('blockDim.y', 'width(n)')}\n{COL}\n{STORE}", []),
    (f"{ROW.replace('blockDim.y', 'n++')}\n{COL}\n{STORE}", []),
    # another statement between them: no pair to swap
    (f"{ROW}\nint k = 0;\n{COL}\n{STORE}", []),
])
def test_decl_order_takes_index_declarations_in_either_order(
        body: str, want: list[dict[str, str]]) -> None:
    r = rule(DECLS)
    got = [{k: v for k, v in s.items() if k in "CR"} for s in
           sites(r, kernel(body, "const float* x, float* y, int n"))]
    assert got == want
    off = rule(DECLS, extra="  isomorphisms: -decl_order\n")
    assert len(sites(off, kernel(body, "const float* x, float* y, int n"))) == (
        len(want) if body.startswith(COL) else 0)


def test_decl_order_writes_the_templates_order() -> None:
    """The rewrite replaces both declarations: the template's order, the names the code's."""
    r = rule(DECLS, DECLS.replace("y[$R * n + $C]", "y[$C * n + $R]"))
    code = kernel(f"{ROW}\n{COL}\n{STORE}", "const float* x, float* y, int n")
    out = applied(r, code)
    assert out.index("int c =") < out.index("int r =") and "y[c * n + r]" in out
WINDOW = ("int $X = blockIdx.x * blockDim.x + threadIdx.x;\n"
          "int $Y = blockIdx.y * blockDim.y + threadIdx.y;\n"
          "if ($X < $W && $Y < $H) {\n    $$$PRE;\n"
          "    for (int $V = 0; $V < 3; $V++) {\n        $S += $P[$Y * $W + $X + $V];\n    }\n"
          "    $$$POST;\n}")
WINDOW_INDICES = ("int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "int y = blockIdx.y * blockDim.y + threadIdx.y;\n")
WINDOW_BODY = ("float s = 0.0f;\nint c = 0;\nfor (int v = 0; v < 3; v++) {\n"
               "    s += p[y * W + x + v];\n}\nq[y * W + x] = s;")
WINDOW_ARGS = "const float* p, float* q, int H, int W"


@pytest.mark.parametrize("guard", ["if (x >= W || y >= H) return;",
                                   "if (y >= H || x >= W) { return; }"])
def test_the_last_if_of_a_run_takes_an_early_return_whose_body_holds_runs(guard: str) -> None:
    """A run of statements whose last is an if with runs before and after its fixed
    statements: the early return and the kernel's rest, matched against the whole body."""
    code = kernel(WINDOW_INDICES + guard + "\n" + WINDOW_BODY, WINDOW_ARGS)
    found = sites(rule(WINDOW), code)
    assert [(f["PRE"], f["POST"], f["S"]) for f in found] == [
        ("float s = 0.0f;\nint c = 0;", "q[y * W + x] = s;", "s")]
    out = applied(rule(WINDOW), code)
    assert "return" not in out and "if (x < W && y < H) {\n    float s = 0.0f;" in out
    assert sites(rule(WINDOW, extra="  isomorphisms: -early_return\n"), code) == []


def test_the_last_if_of_a_run_takes_no_early_return_that_is_not_its_body() -> None:
    # a statement after the kernel's rest that the body does not end with is still its POST;
    # but the early return inside a loop returns from the kernel, not the iteration
    looped = kernel("for (int t = 0; t < 2; t++) {\n" + WINDOW_INDICES
                    + "if (x >= W || y >= H) return;\n" + WINDOW_BODY + "\n}", WINDOW_ARGS)
    assert sites(rule(WINDOW), looped) == []
    # a float bound: !(x < f) is not x >= f for a NaN
    floaty = kernel(WINDOW_INDICES + "if (x >= f || y >= H) return;\n" + WINDOW_BODY,
                    WINDOW_ARGS + ", float f")
    assert sites(rule(WINDOW.replace("$W &&", "$F &&")), floaty) == []
    # the rest lacks the anchor's fixed loop: no match
    other = kernel(WINDOW_INDICES + "if (x >= W || y >= H) return;\n"
                   + WINDOW_BODY.replace("v < 3", "v < 4"), WINDOW_ARGS)
    assert sites(rule(WINDOW), other) == []


@pytest.mark.parametrize("code,want", [
    ("if (i > -1) { y[0] = 1.0f; }", [{"I": "i"}]),
    ("if (i >= 0) { y[0] = 1.0f; }", [{"I": "i"}]),
    ("if (f > -1) { y[0] = 1.0f; }", []),  # a float: -0.5 > -1, and not >= 0
    ("if (i > -2) { y[0] = 1.0f; }", []),
])
def test_integer_bounds_lower(code: str, want: list[dict[str, str]]) -> None:
    body = "int i = threadIdx.x;\nfloat f = x[0];\n" + code
    assert sites(rule("if ($I >= 0) {\n    $$$B;\n}").replace("$$$B;", "y[0] = 1.0f;"),
                 kernel(body)) == want


@pytest.mark.parametrize("loop,ok", [
    ("for (int d = -r; d < r + 1; ++d) { y[d + r] = 0.0f; }", True),
    ("for (int d = -r; d <= r; ++d) { y[d + r] = 0.0f; }", True),
    ("for (int d = -r; d < r + 2; ++d) { y[d + r] = 0.0f; }", False),
])
def test_integer_bounds_upper(loop: str, ok: bool) -> None:
    """``d < r + 1`` is ``d <= r`` for integers (a first blur's ``blurRow < BLUR_SIZE + 1``),
    and the rewrite writes the template's spelling with the code's operands."""
    anchor = "for (int $D = -$R; $D <= $R; ++$D) {\n    $$$B;\n}"
    code = kernel("int r = n;\n" + loop)
    found = sites(rule(anchor), code)
    assert found == ([{"D": "d", "R": "r", "B": "y[d + r] = 0.0f;"}] if ok else [])
    if "r + 1" in loop:  # floats: 0.5 < 1.5 + 1, and 0.5 <= 1.5 too, but 2.2 < 1.5 + 1 alone
        floaty = kernel("float r = 1.5f;\n" + loop.replace("int d", "float d"))
        assert sites(rule(anchor.replace("int $D", "float $D")), floaty) == []
