"""A rewrite of the unbraced body of a loop or a branch keeps all of its replacement inside:
the replacement is braced when it holds more than one statement, and a statement that is
such a body is never removed (the next statement would become the body)."""

from __future__ import annotations

from pathlib import Path

from klc.cuda.parse import parse_bytes
from klc.cuda.syntax import parser
from klc.edits.insert import _remove_statement
from klc.pipeline import apply_rules
from klc.rule import RuleSet, load_rules_text

ROOT = Path(__file__).resolve().parents[2]

REPEATED_SUM = b"""__global__ void k(const float* x, float* y, int n, int reps) {
    float acc = 0.0f;
    for (int r = 0; r < reps; r++)
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            acc += x[i];
        }
    y[threadIdx.x] = acc;
}
"""


def _skill(name: str):  # type: ignore[no-untyped-def]
    return next(r for r in RuleSet.load([str(ROOT / "skills")]).rules if r.name == name)


def _body_of_first(src: bytes, kind: str):  # type: ignore[no-untyped-def]
    """The body (or consequence) of the first `kind` statement of the file's tree."""
    stack = [parser().parse(src).root_node]
    while stack:
        node = stack.pop(0)
        if node.type == kind:
            return node.child_by_field_name("body") or node.child_by_field_name("consequence")
        stack.extend(node.named_children)
    raise AssertionError(kind)


def test_a_loop_split_in_two_under_an_unbraced_loop_stays_in_it() -> None:
    out = apply_rules(parse_bytes(REPEATED_SUM, "k.cu"), [_skill("vectorize_float4_loop")])
    assert out.changed
    body = _body_of_first(out.source, "for_statement")
    # both loops, the float4 one and its tail, are the outer loop's body
    assert body.type == "compound_statement"
    assert [c.type for c in body.named_children] == ["for_statement", "for_statement"]
    assert b"n / 4" in out.source and b"4 * (n / 4)" in out.source


RULES = """
rule two_statements {
  kind: skill
  context: global
  anchor: ```
    $Y[$I] = $E;
  ```
  rewrite replace: ```
    float t = $E;
    $Y[$I] = t;
  ```
}

rule one_statement {
  kind: skill
  context: global
  anchor: ```
    $Y[$I] = $E;
  ```
  rewrite replace: ```
    $Y[$I] += 0.0f + $E;
  ```
}
"""

GUARDED = b"""__global__ void g(const float* x, float* y, int n) {
    int i = threadIdx.x;
    if (i < n)
        y[i] = x[i];
    else
        y[0] = 1.0f;
}
"""


def test_two_statements_for_an_unbraced_branch_are_braced() -> None:
    rule = load_rules_text(RULES, "b.rule")[0]
    out = apply_rules(parse_bytes(GUARDED, "g.cu"), [rule])
    assert out.changed and not parser().parse(out.source).root_node.has_error
    then = _body_of_first(out.source, "if_statement")
    assert then.type == "compound_statement" and len(then.named_children) == 2
    assert b"    if (i < n)\n        {\n            float t = x[i];\n" in out.source
    # the else branch's statement was rewritten too, inside braces of its own
    assert out.source.count(b"{") == out.source.count(b"}") == 3


def test_one_statement_stays_unbraced() -> None:
    rule = load_rules_text(RULES, "b.rule")[1]
    out = apply_rules(parse_bytes(GUARDED, "g.cu"), [rule])
    assert out.changed
    assert b"    if (i < n)\n        y[i] += 0.0f + x[i];\n" in out.source
    assert out.source.count(b"{") == 1


def test_a_statement_that_is_an_unbraced_body_is_not_removed() -> None:
    src = (b"__global__ void h(float* y) {\n    if (threadIdx.x == 0)\n        __syncwarp();\n"
           b"    y[threadIdx.x] = 0.0f;\n    __syncwarp();\n}\n")
    unit = parse_bytes(src, "h.cu")
    edit = _remove_statement(unit, unit.functions[0], "__syncwarp();")
    # the line removed is the last __syncwarp, at the body's top level, not the if's body
    assert edit is not None and src[edit.start:edit.end] == b"\n    __syncwarp();"
    only_body = parse_bytes(src.replace(b"    __syncwarp();\n}", b"}"), "h.cu")
    assert _remove_statement(only_body, only_body.functions[0], "__syncwarp();") is None
