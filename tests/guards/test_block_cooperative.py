"""``block_cooperative(anchor)`` and the early return the anchor matched: privatize_atomic_
histogram puts barriers around the code it matches, so every thread must reach it; the
``return`` of ``if (i >= n) return;`` that the early_return isomorphism read as the anchor's
``if (i < n) { ... }`` is rewritten away, any other return before the anchor's end is not."""

from __future__ import annotations

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites, spec_of
from klc.rule.ruleset import load_rules_text

SPEC = ("/* klc-spec\nkernel: k\nsizes: {n: 1024}\nargs:\n"
        "  - {name: l, shape: [n], role: in, init: \"randint(0, 8)\"}\n"
        "  - {name: c, shape: [8], role: inout}\n  - {name: n, value: n}\n"
        "grid: [4]\nblock: [256]\n*/\n")

PROBE = """
rule probe {
  kind: skill
  context: global, kernel_scope
  anchor: ```
    int $I = $GI;
    if ($I < $N) {
        $$$PRE;
        atomicAdd(&$G[$V], $W);
    }
  ```
  guard: block_cooperative(anchor)
  rewrite replace: ```
    __syncthreads();
    int $I = $GI;
    if ($I < $N) {
        $$$PRE;
        atomicAdd(&$G[$V], $W);
    }
  ```
}
"""


def verdicts(body: str) -> list[tuple[bool, str]]:
    code = SPEC + ("__global__ void k(const int* l, unsigned int* c, int n) {\n"
                   f"{body}\n}}\n")
    rules = load_rules_text(PROBE, "t.rule")
    unit = parse_bytes(code.encode(), "k.cu")
    return [(s.ok, s.reason) for s in find_sites(unit, rules, None, spec_of(unit))]


def test_the_wrapped_spelling_is_cooperative() -> None:
    [(ok, why)] = verdicts("int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "if (i < n) {\n    atomicAdd(&c[l[i]], 1u);\n}")
    assert ok, why


def test_the_matched_early_return_is_cooperative() -> None:
    for guard in ("if (i >= n) return;", "if (i >= n) { return; }"):
        [(ok, why)] = verdicts("int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                               f"{guard}\nint v = l[i];\natomicAdd(c + v, 1u);")
        assert ok, why


def test_a_return_the_anchor_did_not_read_as_its_if_still_refuses() -> None:
    # a return in the element code ($$$PRE) stays in the rewritten code
    [(ok, why)] = verdicts("int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "if (i >= n) return;\nint v = l[i];\nif (v < 0) return;\n"
                           "atomicAdd(&c[v], 1u);")
    assert not ok and "(k.cu:15:12)" in why  # the return of `if (v < 0) return;`
    # a return before the anchor: those threads never reach the barrier
    [(ok, why)] = verdicts("if (threadIdx.x > 200) return;\n"
                           "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "if (i < n) {\n    atomicAdd(&c[l[i]], 1u);\n}")
    assert not ok and "return" in why
