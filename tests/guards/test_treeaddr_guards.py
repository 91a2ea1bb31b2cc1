"""``tree_combine`` and ``whole_block_tree`` (klc/guards/treeaddr.py), through the skill
interleaved_tree_to_sequential: which interleaved trees may take sequential addressing."""

from __future__ import annotations

import pytest

from klc.cuda.parse import parse_bytes
from klc.pipeline import apply_site, find_sites, spec_of
from klc.rule import RuleSet

SPEC = """/* klc-spec
kernel: k
sizes: {{n: 4096}}
args:
  - {{name: x, shape: [n], role: in}}
  - {{name: out, shape: ["n / {b}"], role: out}}
  - {{name: n, value: n}}
grid: ["n / {b}"]
block: {block}
*/
"""


def kernel(step: str, size: str = "256", block: str = "[256]",
           arr: str = "__shared__ float s[256];", t: str = "t") -> str:
    return (SPEC.format(b=256, block=block) +
            "__global__ void k(const float* x, float* out, int n) {\n"
            f"    {arr}\n"
            "    unsigned int t = threadIdx.x;\n"
            "    s[t] = x[blockIdx.x * 256 + t];\n    __syncthreads();\n"
            f"    for (unsigned int k = 1; k < {size}; k *= 2) {{\n"
            f"        if ({t} % (2 * k) == 0) {{\n            {step}\n        }}\n"
            "        __syncthreads();\n    }\n"
            "    if (t == 0) out[blockIdx.x] = s[0];\n}\n")


def sites(code: str):  # type: ignore[no-untyped-def]
    rules = [r for r in RuleSet.load(["skills"]).rules
             if r.name == "interleaved_tree_to_sequential"]
    unit = parse_bytes(code.encode(), "k.cu")
    return find_sites(unit, rules, spec=spec_of(unit))


@pytest.mark.parametrize("step", [
    "s[t] += s[t + k];",
    "s[t] = fmaxf(s[t], s[t + k]);",
    "s[t] = fminf(s[t + k], s[t]);",
    "s[t] = max(s[t], s[k + t]);",
])
def test_trees_of_an_associative_operator_take_sequential_addressing(step: str) -> None:
    code = kernel(step)
    found = sites(code)
    assert len(found) == 1 and found[0].ok, [s.reason for s in found]
    unit = parse_bytes(code.encode(), "k.cu")
    out = apply_site(unit, sites(code)[0], spec=spec_of(unit)).source.decode()
    assert "for (unsigned int k = 256 / 2; k > 0; k >>= 1)" in out
    assert "if (t < k)" in out and step in out


@pytest.mark.parametrize(("kw", "why"), [
    ({"step": "s[t] -= s[t + k];"}, "is not `s[t] += s[t + k]`"),
    ({"step": "s[t] += 2.0f * s[t + k];"}, "is not `s[t] += s[t + k]`"),
    ({"step": "s[t + 1] += s[t + k];"}, "not the thread's slot"),
    ({"step": "s[t] = fmaxf(s[t], s[t + 2 * k]);"}, "maximum or minimum of the two slots"),
    ({"step": "s[t] += s[t + k]; out[t] = s[t];"}, "is not one assignment"),
    ({"step": "s[t] += s[t + k];", "size": "128"}, "is not the block's x extent 256"),
    ({"step": "s[t] += s[t + k];", "size": "96", "block": "[96]"}, "power of two"),
    ({"step": "s[t] += s[t + k];", "block": "[128, 2]"}, "not one-dimensional"),
    ({"step": "s[t] += s[t + k];", "arr": "float s[256];"}, "not a __shared__ array"),
])
def test_trees_that_pair_other_slots_are_refused(kw: dict[str, str], why: str) -> None:
    found = sites(kernel(**kw))
    assert found and not any(s.ok for s in found)
    assert any(why in s.reason for s in found), [s.reason for s in found]
