"""``block_thread_index($T)``: $T is threadIdx.x or a local integer copy of it that is never
reassigned (the unrolled tree tails read `tid < 32` as warp 0 and `tid` as each lane's own
slot)."""

from __future__ import annotations

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites
from klc.rule.ruleset import load_rules_text

PROBE = """
rule probe {
  kind: skill
  anchor: ```
    $R[$T] = 0.0f;
  ```
  guard: block_thread_index($T)
  rewrite replace: ```
    $R[$T] = 0.0f;
  ```
}
"""


def verdicts(body: str) -> list[tuple[bool, str]]:
    code = f"__global__ void k(float* y, int n) {{\n    __shared__ float s[256];\n{body}\n}}\n"
    rules = load_rules_text(PROBE, "t.rule")
    return [(s.ok, s.reason) for s in find_sites(parse_bytes(code.encode(), "k.cu"), rules)]


def test_threadidx_and_its_copies() -> None:
    for body in ("s[threadIdx.x] = 0.0f;", "s[(int)threadIdx.x] = 0.0f;",
                 "int tid = threadIdx.x;\ns[tid] = 0.0f;",
                 "const unsigned int tid = threadIdx.x;\ns[tid] = 0.0f;",
                 "size_t t = (size_t)threadIdx.x;\ns[t] = 0.0f;"):
        [(ok, why)] = verdicts(body)
        assert ok, (body, why)


def test_other_indices_are_refused() -> None:
    cases = {
        "int t = threadIdx.x % 128;\ns[t] = 0.0f;": "not a local initialised to threadIdx.x",
        "int t = threadIdx.y;\ns[t] = 0.0f;": "not a local initialised to threadIdx.x",
        "int t = threadIdx.x;\nt += 1;\ns[t] = 0.0f;": "reassigned later",
        "float t = threadIdx.x;\ns[(int)t] = 0.0f;": "has type float",
        "unsigned char t = threadIdx.x;\ns[t] = 0.0f;": "has type unsigned char",
        "s[n] = 0.0f;": "not a local initialised to threadIdx.x",
        "s[threadIdx.x + 1] = 0.0f;": "is not threadIdx.x",
    }
    for body, want in cases.items():
        [(ok, why)] = verdicts(body)
        assert not ok and want in why, (body, why)
