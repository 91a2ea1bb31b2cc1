"""The block-reduction skills' guards (passes/block_reduce.rule): ``thread0_reads_after($X)``
(only thread 0 reads the reduced variable after the match), ``unused_after($X)`` (the tree's
array is not used after it), ``spare_shared_array(NAME, "T", $E, N)`` (a __shared__
array a warp-shuffle rewrite may park $E / N warp sums in), ``shared_array($R)`` and
``shared_array_holds($R, $N)`` (passes/block_shuffle.rule: the tree's own array, and its
cells), ``unused_before($X)`` (no thread still uses the array when the match starts), and
the built-in warpSize folded to 32."""

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


ARRAY = ("shared_array($Y)", "$Y[0] = $B;")
HOLDS = ("shared_array_holds($Y, $B)", "$Y[0] = $B;")


def test_shared_array_takes_a_shared_array_of_any_size() -> None:
    for decl in ("__shared__ float s[BLOCK];", "__shared__ float s[8];",
                 "extern __shared__ float s[];", "__shared__ int s[BLOCK];"):
        [(ok, why)] = verdicts(*ARRAY, decl + "\ns[0] = BLOCK;")
        assert ok, (decl, why)


def test_shared_array_refusals() -> None:
    cases = {
        "float s[8];\ns[0] = BLOCK;": "not a one-dimensional __shared__ array",
        "__shared__ float s[8][4];\ns[0][0] = 1.0f;\nfloat* t = s[0];\nt[0] = BLOCK;": "",
        "__shared__ float s[8];\n{ __shared__ float s[4]; s[0] = BLOCK; }": "declared 2 times",
    }
    for body, want in cases.items():
        found = verdicts(*ARRAY, body)
        assert found and not any(ok for ok, _ in found) and all(want in w for _, w in found), \
            (body, found)


def test_shared_array_holds_counts_the_declared_cells() -> None:
    for decl in ("__shared__ float s[BLOCK];", "__shared__ float s[1024];",
                 "__shared__ float s[2 * BLOCK];"):
        [(ok, why)] = verdicts(*HOLDS, decl + "\ns[0] = BLOCK;")
        assert ok, (decl, why)
    cases = {
        "__shared__ float s[32];\ns[0] = BLOCK;": "has 32 elements",
        "__shared__ float s[BLOCK / 2];\ns[0] = BLOCK;": "has 128 elements",
        "extern __shared__ float s[];\ns[0] = BLOCK;": "gives no dynamic shared memory",
        "__shared__ float s[BLOCK];\ns[0] = n;": "has no known integer value",
    }
    for body, want in cases.items():
        [(ok, why)] = verdicts(*HOLDS, body)
        assert not ok and want in why, (body, why)


def test_shared_array_holds_reads_an_extern_arrays_size_from_the_spec() -> None:
    from klc.pipeline import spec_of

    def listed(shared: str) -> list[tuple[bool, str]]:
        code = ("/* klc-spec\nkernel: k\nsizes: {n: 1024}\nargs:\n"
                "  - {name: out, shape: [n], role: out}\n  - {name: n, value: n}\n"
                f"grid: [4]\nblock: [256]\nshared: {shared}\n*/\n"
                "__global__ void k(float* out, int n) {\n    extern __shared__ float s[];\n"
                "    s[0] = 256;\n}\n")
        unit = parse_bytes(code.encode(), "k.cu")
        rules = load_rules_text(_probe(*HOLDS), "t.rule")
        return [(s.ok, s.reason) for s in find_sites(unit, rules, {}, spec_of(unit))]

    [(ok, why)] = listed("1024")
    assert ok, why
    [(ok, why)] = listed("512")
    assert not ok and "has 128 elements" in why, why


def test_warp_size_folds_to_32() -> None:
    for expr in ("warpSize", "warpSize / 2 * 2", "(BLOCK / warpSize) * 4"):
        [(ok, why)] = verdicts("equals($E, 32)", "out[1] = $E;", f"out[1] = {expr};")
        assert ok, (expr, why)
    # a variable of that name is a variable: not the built-in
    [(ok, why)] = verdicts("equals($E, 32)", "out[1] = $E;",
                           "int warpSize = n;\nout[1] = warpSize;")
    assert not ok, why


def test_unused_before() -> None:
    probe = ("unused_before($Y)", "$Y[threadIdx.x] = $B;")
    head = "__shared__ float s[BLOCK];\n"
    [(ok, why)] = verdicts(*probe, head + "float v = x[0];\ns[threadIdx.x] = BLOCK;")
    assert ok, why
    cases = {
        head + "float v = s[1];\ns[threadIdx.x] = BLOCK;": "`s` is used before the match",
        head + "for (int r = 0; r < n; r++) { s[threadIdx.x] = BLOCK; }": "inside the for loop",
    }
    for body, want in cases.items():
        found = verdicts(*probe, body)
        assert found and not found[-1][0] and want in found[-1][1], (body, found)
