"""Isomorphisms that histogram code needs (privatize_atomic_histogram on real spellings):
``address_of_element`` (``&a[i]`` / ``a + i`` for a pointer or array ``a``) and the
early return of an ``if`` whose body ends with fixed statements after its run
(``if (i < n) { $$$PRE; atomicAdd(&c[v], 1); }`` / ``if (i >= n) return; ...``)."""

from __future__ import annotations

import pytest

from klc.cuda.parse import parse_bytes
from klc.pipeline import apply_rules, find_sites
from klc.rule import load_rules_text


def rule(anchor: str, replace: str = "", extra: str = "") -> str:
    body = replace or anchor
    return (f'rule r {{\n  kind: skill\n  description: "t"\n  context: any\n'
            f"  anchor: ```\n{anchor}\n  ```\n{extra}"
            f"  rewrite replace: ```\n{body}\n  ```\n}}\n")


def sites(rule_text: str, code: str) -> list[dict[str, str]]:
    rules = load_rules_text(rule_text, "t.rule")
    unit = parse_bytes(code.encode(), "k.cu")
    return [{k: b.text for k, b in s.match.bindings.items()}
            for s in find_sites(unit, rules) if s.ok]


def applied(rule_text: str, code: str) -> str:
    rules = load_rules_text(rule_text, "t.rule")
    return apply_rules(parse_bytes(code.encode(), "k.cu"), rules).source.decode()


def kernel(body: str, params: str = "int* c, const long* l, int n, int q") -> str:
    return f"__global__ void k({params}) {{\n{body}\n}}\n"


ATOMIC = "atomicAdd(&$G[$V], $W);"


def test_address_of_element_reads_a_pointer_sum() -> None:
    code = kernel("atomicAdd(c + l[0], 2);")
    assert sites(rule(ATOMIC), code) == [{"G": "c", "V": "l[0]", "W": "2"}]
    # the template's spelling is written, the metavariables with the code's text
    assert "atomicAdd(&c[l[0]], 2 + 1);" in applied(rule(ATOMIC, "atomicAdd(&$G[$V], $W + 1);"),
                                                    code)
    # a pointer expression as the base keeps its meaning in parentheses
    assert "atomicAdd(&(c + q)[1], 4 + 1);" in applied(
        rule(ATOMIC, "atomicAdd(&$G[$V], $W + 1);"), kernel("atomicAdd(c + q + 1, 4);"))
    assert sites(rule(ATOMIC, extra="  isomorphisms: -address_of_element\n"), code) == []


def test_address_of_element_needs_a_pointer_base() -> None:
    # an integer sum is not an address: the obligation on the base refuses it
    assert sites(rule("$X = &$G[$V];"), kernel("long o = 3;\nlong s;\ns = l[0] + o;")) == []
    assert sites(rule("$X = &$G[$V];"), kernel("int* p;\np = c + q;")) == [
        {"X": "p", "G": "c", "V": "q"}]


TAIL = ("$IT $I = $GI;\nif ($I < $N) {\n    $$$PRE;\n    atomicAdd(&$G[$V], $W);\n}")


@pytest.mark.parametrize("guard", ["if (i >= n) return;", "if (n <= i) { return; }",
                                   "if (!(i < n)) return;"])
def test_early_return_with_statements_after_the_run(guard: str) -> None:
    code = kernel(f"long i = (long)blockIdx.x * blockDim.x + threadIdx.x;\n{guard}\n"
                  "const long v = l[i];\natomicAdd(c + v, 1);", "int* c, const long* l, long n")
    assert sites(rule(TAIL), code) == [
        {"IT": "long", "I": "i", "GI": "(long)blockIdx.x * blockDim.x + threadIdx.x",
         "N": "n", "PRE": "const long v = l[i];", "G": "c", "V": "v", "W": "1"}]
    out = applied(rule(TAIL), code)
    assert ("if (i < n) {\n    const long v = l[i];\n    atomicAdd(&c[v], 1);\n}\n}\n") in out
    # the run may be empty: the fixed statement right after the return
    bare = kernel(f"long i = (long)blockIdx.x * blockDim.x + threadIdx.x;\n{guard}\n"
                  "atomicAdd(c + l[i], 1);", "int* c, const long* l, long n")
    assert [s["PRE"] for s in sites(rule(TAIL), bare)] == [""]


def test_early_return_tail_must_end_the_kernel() -> None:
    # the body's last statement must be the kernel's last: a store after it would be wrapped
    code = kernel("int i = blockIdx.x * blockDim.x + threadIdx.x;\nif (i >= n) return;\n"
                  "atomicAdd(&c[l[i]], 1);\nc[0] = 0;")
    assert sites(rule(TAIL), code) == []
    # and it must match the fixed statements: a different last statement is no match
    other = kernel("int i = blockIdx.x * blockDim.x + threadIdx.x;\nif (i >= n) return;\n"
                   "atomicAdd(&c[l[i]], 1);\nc[i] = 0;")
    assert sites(rule(TAIL), other) == []
