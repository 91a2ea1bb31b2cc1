"""The block-reduction skills' guards (passes/block_reduce.rule): ``thread0_reads_after($X)``
(only thread 0 reads the reduced variable after the match), ``unused_after($X)`` (the tree's
array is not used after it) and ``spare_shared_array(NAME, "T", $E, N)`` (a __shared__
array a warp-shuffle rewrite may park $E / N warp sums in)."""

from __future__ import annotations

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites
from klc.rule.ruleset import load_rules_text


def _probe(guard: str, anchor: str) -> str:
    return f"""
rule probe {{
  kind: skill
  anchor: ```
    {anchor}
  ```
  guard: {guard}
  rewrite replace: ```
    {anchor}
  ```
}}
"""


def verdicts(guard: str, anchor: str, body: str) -> list[tuple[bool, str]]:
    code = ("#define BLOCK 256\n__global__ void k(const float* x, float* out, int n) {\n"
            f"{body}\n}}\n")
    rules = load_rules_text(_probe(guard, anchor), "t.rule")
    return [(s.ok, s.reason) for s in find_sites(parse_bytes(code.encode(), "k.cu"), rules)]


READS = ("thread0_reads_after($ACC)", "$ACC = red[0];")
HEAD = "__shared__ float red[BLOCK];\nfloat acc = x[threadIdx.x];\nred[threadIdx.x] = acc;\n"


def test_thread0_reads_after_accepts_reads_by_thread_zero() -> None:
    for tail in ("if (threadIdx.x == 0) out[blockIdx.x] = acc;",
                 "if (0 == threadIdx.x) { atomicAdd(out, acc); }",
                 "int tid = threadIdx.x;\nif (tid == 0 && blockIdx.x < n) out[blockIdx.x] = acc;",
                 "const unsigned int t = threadIdx.x;\nif (!t) out[0] = acc;",
                 "out[threadIdx.x] = 1.0f;", ""):
        [(ok, why)] = verdicts(*READS, HEAD + "acc = red[0];\n" + tail)
        assert ok, (tail, why)


def test_thread0_reads_after_refuses_other_readers() -> None:
    cases = {
        "out[threadIdx.x] = acc;": "read after the match by threads other than thread 0",
        "if (threadIdx.x < 32) out[threadIdx.x] = acc;": "other than thread 0",
        "if (threadIdx.x == 0) out[0] = 1.0f; else out[1] = acc;": "other than thread 0",
        "if (threadIdx.x % 32 == 0) atomicAdd(out, acc);": "other than thread 0",
        "int t = threadIdx.x;\nt++;\nif (t == 0) out[0] = acc;": "other than thread 0",
    }
    for tail, want in cases.items():
        [(ok, why)] = verdicts(*READS, HEAD + "acc = red[0];\n" + tail)
        assert not ok and want in why, (tail, why)


def test_thread0_reads_after_refuses_loops_aliases_and_shared() -> None:
    loop = HEAD + "for (int r = 0; r < n; r++) {\nacc = red[0];\n}\n"
    [(ok, why)] = verdicts(*READS, loop)
    assert not ok and "inside the for loop" in why, why
    alias = HEAD + "float* p = &acc;\nacc = red[0];\nif (threadIdx.x == 0) out[0] = *p;"
    [(ok, why)] = verdicts(*READS, alias)
    assert not ok and "address of `acc` is taken" in why, why
    shared = "__shared__ float red[BLOCK];\n__shared__ float acc;\nacc = red[0];\n"
    [(ok, why)] = verdicts(*READS, shared)
    assert not ok and "not a thread's own local" in why, why


UNUSED = ("unused_after($R)", "acc = $R[0];")


def test_unused_after() -> None:
    [(ok, why)] = verdicts(*UNUSED, HEAD + "acc = red[0];\nif (threadIdx.x == 0) out[0] = acc;")
    assert ok, why
    [(ok, why)] = verdicts(*UNUSED, HEAD + "acc = red[0];\nif (threadIdx.x == 0) out[0] = red[0];")
    assert not ok and "`red` is used after the match" in why, why
    [(ok, why)] = verdicts(*UNUSED, HEAD + "for (int r = 0; r < n; r++) acc = red[0];")
    assert not ok and "inside the for loop" in why, why


SPARE = ('spare_shared_array("ws", "float", $B, 32)', "$Y[0] = $B;")


def test_spare_shared_array_accepts_a_spare_array() -> None:
    for decl in ("__shared__ float ws[BLOCK / 32];", "__shared__ float ws[32];",
                 "__shared__ float ws[8];"):
        [(ok, why)] = verdicts(*SPARE, decl + "\nout[0] = BLOCK;")
        assert ok, (decl, why)


def test_spare_shared_array_refusals() -> None:
    cases = {
        "__shared__ float ws[4];\nout[0] = BLOCK;": "has 4 elements",
        "__shared__ int ws[8];\nout[0] = BLOCK;": "holds int, not float",
        "float ws[8];\nout[0] = BLOCK;": "not a one-dimensional __shared__ array",
        "__shared__ float ws[8][2];\nout[0] = BLOCK;": "not a one-dimensional __shared__ array",
        "__shared__ float ws[8];\nws[1] = 1.0f;\nout[0] = BLOCK;": "is also used at",
        "__shared__ float ws[8];\nout[0] = BLOCK;\nout[1] = ws[0];": "is also used at",
        "out[0] = BLOCK;": "declared 0 times",
        "extern __shared__ float ws[];\nout[0] = BLOCK;": "not a one-dimensional __shared__",
    }
    for body, want in cases.items():
        [(ok, why)] = verdicts(*SPARE, body)
        assert not ok and want in why, (body, why)
