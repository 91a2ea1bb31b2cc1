"""A declaration that a rewrite writes back keeps the ``const`` its anchor matched through
the const_local isomorphism, unless the rewrite assigns the name, increments it or takes
its address, or the anchor spells the const itself (a rule that means to drop it)."""

from __future__ import annotations

from klc.cuda.parse import parse_bytes
from klc.pipeline import apply_rules
from klc.rule import load_rules_text

KERNEL = """
__global__ void k(float* out, int n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { out[i] = 1.0f; }
}
"""

EAST = KERNEL.replace("const unsigned i", "unsigned const i").replace(
    "unsigned const i", "int const i")


def _rule(anchor_decl: str, rewrite: str, extra: str = "") -> str:
    return f"""
rule r {{
  kind: skill
  context: global
  anchor: ```
    {anchor_decl}
    if ($I < $N) {{ $$$B; }}
  ```
  metavar $I: identifier
{"  metavar $TY: type" if "$TY" in anchor_decl else ""}
  rewrite replace: ```
    {rewrite}
    if ($I < $N) {{ $$$B; }}{extra}
  ```
}}
"""


def _apply(rule_text: str, source: str = KERNEL) -> str:
    rules = load_rules_text(rule_text, "<test>")
    unit = parse_bytes(source.encode(), "k.cu")
    out = apply_rules(unit, rules, {}, None)
    assert out.changed
    return out.source.decode()


def test_a_declaration_written_back_keeps_its_const() -> None:
    out = _apply(_rule("$TY $I = blockIdx.x * blockDim.x + threadIdx.x;",
                       "$TY $I = blockIdx.x * blockDim.x + threadIdx.x + 0;"))
    assert "const unsigned i = blockIdx.x * blockDim.x + threadIdx.x + 0;" in out


def test_east_const_is_kept_too() -> None:
    out = _apply(_rule("$TY $I = blockIdx.x * blockDim.x + threadIdx.x;",
                       "$TY $I = blockIdx.x * blockDim.x + threadIdx.x + 0;"), EAST)
    assert "const int i = blockIdx.x" in out


def test_a_literal_type_keeps_it() -> None:
    out = _apply(_rule("unsigned $I = blockIdx.x * blockDim.x + threadIdx.x;",
                       "unsigned $I = blockIdx.x * blockDim.x + threadIdx.x + 0;"))
    assert "const unsigned i =" in out


def test_a_name_the_rewrite_assigns_loses_it() -> None:
    out = _apply(_rule("$TY $I = blockIdx.x * blockDim.x + threadIdx.x;",
                       "$TY $I = blockIdx.x * blockDim.x + threadIdx.x;",
                       "\n    $I += 1;"))
    assert "    unsigned i = blockIdx.x" in out and "const unsigned i" not in out
    for step in ("++$I;", "$I--;", "$I <<= 1;", "unsigned* p = &$I;"):
        out = _apply(_rule("$TY $I = blockIdx.x * blockDim.x + threadIdx.x;",
                           "$TY $I = blockIdx.x * blockDim.x + threadIdx.x;",
                           f"\n    {step}"))
        assert "const unsigned i" not in out, step


def test_an_anchor_that_spells_the_const_may_drop_it() -> None:
    out = _apply(_rule("const $TY $I = blockIdx.x * blockDim.x + threadIdx.x;",
                       "$TY $I = blockIdx.x * blockDim.x + threadIdx.x;"))
    assert "    unsigned i = blockIdx.x" in out and "const unsigned i" not in out


def test_without_the_isomorphism_nothing_is_added() -> None:
    text = _rule("$TY $I = blockIdx.x * blockDim.x + threadIdx.x;",
                 "$TY $I = blockIdx.x * blockDim.x + threadIdx.x + 0;").replace(
        "  metavar $I: identifier\n", "  metavar $I: identifier\n  isomorphisms: -const_local\n")
    plain = KERNEL.replace("const unsigned i", "unsigned i")
    out = _apply(text, plain)
    assert "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x + 0;" in out
