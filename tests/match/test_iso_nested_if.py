"""The isomorphism ``nested_if`` (klc.match.iso): an anchor's bounds checked one axis per
``if`` (``if (A) { if (B) S }``, neither with an else) matches one ``&&`` chain of the same
terms in the code, in any order where ``chain_order`` allows it, or ``(A) && (B)``; and
``parentheses``' arithmetic operand of a comparison, ``(r0 + i) >= 0`` in the anchor,
matches ``r0 + i >= 0``."""

from __future__ import annotations

import pytest

from klc.cuda.parse import parse_bytes
from klc.pipeline import apply_rules, find_sites
from klc.rule import load_rules_text

NESTED = ("if (($R + $I) >= 0 && ($R + $I) < H) {\n"
          "    if (($C + $J) >= 0 && ($C + $J) < W) {\n"
          "        $ACC += $E;\n"
          "    }\n"
          "}")


def rule(anchor: str, extra: str = "") -> str:
    return (f'rule r {{\n  kind: skill\n  description: "t"\n  context: any\n'
            f"  anchor: ```\n{anchor}\n  ```\n{extra}"
            f"  rewrite replace: ```\n{anchor}\n  ```\n}}\n")


def kernel(body: str) -> str:
    return ("__global__ void k(const float* m, float* y, int W, int H) {\n"
            "    int r0 = blockIdx.y - 1, c0 = threadIdx.x - 1;\n    float t = 0.0f;\n"
            "    for (int i = 0; i < 3; i++) {\n        for (int j = 0; j < 3; j++) {\n"
            f"{body}\n        }}\n    }}\n    y[0] = t;\n}}\n")


def sites(rule_text: str, code: str) -> list[dict[str, str]]:
    rules = load_rules_text(rule_text, "t.rule")
    unit = parse_bytes(code.encode(), "k.cu")
    return [{k: b.text for k, b in s.match.bindings.items() if k in ("R", "C", "E")}
            for s in find_sites(unit, rules) if s.ok]


READ = "m[(r0 + i) * W + (c0 + j)]"
WANT = [{"R": "r0", "C": "c0", "E": READ}]


@pytest.mark.parametrize("cond", [
    "(r0 + i) >= 0 && (r0 + i) < H && (c0 + j) >= 0 && (c0 + j) < W",
    "r0 + i >= 0 && r0 + i < H && c0 + j >= 0 && c0 + j < W",
    "r0 + i >= 0 && c0 + j >= 0 && r0 + i < H && c0 + j < W",
    "c0 + j < W && r0 + i < H && c0 + j >= 0 && r0 + i >= 0",
    "((r0 + i) >= 0 && (r0 + i) < H) && ((c0 + j) >= 0 && (c0 + j) < W)",
], ids=["chain", "chain_bare", "chain_interleaved", "chain_reversed", "grouped"])
def test_one_chain_matches_the_nested_checks(cond: str) -> None:
    code = kernel(f"if ({cond}) {{ t += {READ}; }}")
    assert sites(rule(NESTED), code) == WANT
    braceless = kernel(f"if ({cond}) t += {READ};")
    assert sites(rule(NESTED), braceless) == WANT


def test_the_nested_spelling_without_parentheses() -> None:
    code = kernel(f"if (r0 + i >= 0 && r0 + i < H) {{ if (c0 + j >= 0 && c0 + j < W) {{ "
                  f"t += {READ}; }} }}")
    assert sites(rule(NESTED), code) == WANT


def test_a_chain_whose_order_guards_a_read_keeps_its_order() -> None:
    """A term that reads memory may not move before the bound that guards it: the chain in
    the anchor's order matches, the one with the read first does not."""
    anchor = "if ($I >= 0 && $I < H) {\n    if (m[$I] > 0.0f) {\n        $ACC += $E;\n    }\n}"
    assert sites(rule(anchor), kernel(f"if (i >= 0 && i < H && m[i] > 0.0f) t += {READ};"))
    assert sites(rule(anchor), kernel(f"if (m[i] > 0.0f && i >= 0 && i < H) t += {READ};")) \
        == []


def test_an_else_is_no_match() -> None:
    code = kernel(f"if ((r0 + i) >= 0 && (r0 + i) < H && (c0 + j) >= 0 && (c0 + j) < W) "
                  f"{{ t += {READ}; }} else {{ t += 1.0f; }}")
    assert sites(rule(NESTED), code) == []
    nested_else = NESTED.replace("    }\n}", "    } else {\n        $ACC += 1.0f;\n    }\n}")
    chain = kernel(f"if ((r0 + i) >= 0 && (r0 + i) < H && (c0 + j) >= 0 && (c0 + j) < W) "
                   f"{{ t += {READ}; }}")
    assert sites(rule(nested_else), chain) == []


def test_nested_if_off() -> None:
    code = kernel(f"if ((r0 + i) >= 0 && (r0 + i) < H && (c0 + j) >= 0 && (c0 + j) < W) "
                  f"{{ t += {READ}; }}")
    assert sites(rule(NESTED, extra="  isomorphisms: -nested_if\n"), code) == []


def test_the_rewrite_writes_the_template_with_the_codes_operands() -> None:
    code = kernel(f"if (c0 + j < W && r0 + i < H && c0 + j >= 0 && r0 + i >= 0) t += {READ};")
    out = apply_rules(parse_bytes(code.encode(), "k.cu"),
                      load_rules_text(rule(NESTED), "t.rule")).source.decode()
    assert "if ((r0 + i) >= 0 && (r0 + i) < H) {" in out
    assert "if ((c0 + j) >= 0 && (c0 + j) < W) {" in out
    assert f"t += {READ};" in out
