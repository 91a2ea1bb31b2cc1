"""``no_loops($$$S)`` (straight-line code: an element's work, not a row's) and
``reads_no_memory($E)`` (a bound a loop may test again), the guards of
elementwise_grid_stride."""

from __future__ import annotations

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites
from klc.rule.ruleset import load_rules_text

PROBE = """
rule probe {
  kind: skill
  anchor: ```
    if ($I < $N) {
        $$$BODY;
    }
  ```
  guard: GUARD
  rewrite replace: ```
    if ($I < $N) {
        $$$BODY;
    }
  ```
}
"""


def verdict(guard: str, cond: str, body: str) -> tuple[bool, str]:
    src = ("__global__ void k(const float* x, float* y, const int* len, int n, int m) {\n"
           "    int i = threadIdx.x;\n"
           f"    if (i < {cond}) {{\n{body}\n    }}\n}}\n")
    sites = find_sites(parse_bytes(src.encode(), "k.cu"),
                       load_rules_text(PROBE.replace("GUARD", guard), "p.rule"))
    assert len(sites) == 1
    return sites[0].ok, sites[0].reason


def test_straight_line_code_has_no_loops() -> None:
    ok, reason = verdict("no_loops($$$BODY)", "n", "        float v = x[i];\n"
                         "        v = v > 0.0f ? 2.0f * v : v;\n        y[i] = v;")
    assert ok, reason


def test_every_kind_of_loop_is_refused() -> None:
    for loop in ("for (int c = 0; c < 4; c++) y[i] += x[c];",
                 "int c = 0; while (c < 4) { y[i] += x[c]; c++; }",
                 "int c = 0; do { y[i] += x[c]; } while (++c < 4);"):
        ok, reason = verdict("no_loops($$$BODY)", "n", "        " + loop)
        assert not ok and "is a loop: not straight-line code" in reason, loop


def test_a_bound_of_names_and_arithmetic_reads_no_memory() -> None:
    for cond in ("n", "n * m", "(n + 1) / 2", "n * blockDim.x"):
        ok, reason = verdict("reads_no_memory($N)", cond, "        y[i] = x[i];")
        assert ok, (cond, reason)


def test_a_bound_that_reads_memory_or_calls_is_refused() -> None:
    for cond, what in (("len[0]", "`len[0]`"), ("*len", "`*len`"), ("min(n, m)", "`min(n, m)`")):
        ok, reason = verdict("reads_no_memory($N)", cond, "        y[i] = x[i];")
        assert not ok and what in reason and "reads memory or calls" in reason, cond


TEMPS = """__global__ void k(const float* x, float* y, int n) {
    int i = threadIdx.x;
    float a, b = 0.0f;
    float arr[2];
    DECL
    if (i < BOUND) {
BODY
    }
}
"""


def temps(body: str, decl: str = "", bound: str = "n") -> tuple[bool, str]:
    src = TEMPS.replace("BODY", body).replace("DECL", decl).replace("BOUND", bound)
    sites = find_sites(parse_bytes(src.encode(), "k.cu"),
                       load_rules_text(PROBE.replace("GUARD", "written_before_read($$$BODY, $N)"),
                                       "p.rule"))
    assert len(sites) == 1
    return sites[0].ok, sites[0].reason


def test_temporaries_set_before_they_are_read() -> None:
    ok, reason = temps("        a = x[i];\n        b = a * a;\n        y[i] = a + b;")
    assert ok, reason
    ok, reason = temps("        float c = x[i];\n        y[i] = c;")  # its own variable
    assert ok, reason


def test_a_value_read_before_it_is_set_is_refused() -> None:
    ok, reason = temps("        y[i] = b + x[i];\n        b = x[i];")
    assert not ok and "its value may carry from one run to the next" in reason
    ok, reason = temps("        b = b + x[i];\n        y[i] = b;")  # reads itself
    assert not ok and "not first set by a `b = ...;`" in reason
    ok, reason = temps("        b += x[i];\n        y[i] = b;")
    assert not ok and "not first set" in reason
    ok, reason = temps("        if (x[i] != 0.0f) a = x[i];\n        y[i] = a;")  # not always set
    assert not ok and "not first set" in reason


def test_arrays_addresses_and_the_bound_are_refused() -> None:
    ok, reason = temps("        arr[0] = x[i];\n        y[i] = arr[0];")
    assert not ok and "not a plain local scalar" in reason
    ok, reason = temps("        a = x[i];\n        y[i] = a;", decl="float* p = &a;")
    assert not ok and "its address may be taken" in reason
    ok, reason = temps("        a = x[i];\n        y[i] = a;", bound="n + (int)a")
    assert not ok and "reads it" in reason


FREE = """#define SCALE 2.0f
#define LANE (threadIdx.x % 32)
__device__ float pure(float v) { return v * SCALE; }
__device__ float lane_of() { return (float)LANE; }
__device__ float outer(float v) { return pure(v) + lane_of(); }
__global__ void k(const float* x, float* y, int n) {
    int i = threadIdx.x;
    if (i < n) {
BODY
    }
}
"""


def free(body: str) -> tuple[bool, str]:
    src = FREE.replace("BODY", body)
    sites = find_sites(parse_bytes(src.encode(), "k.cu"),
                       load_rules_text(PROBE.replace("GUARD", "thread_free($$$BODY)"), "p.rule"))
    assert len(sites) == 1
    return sites[0].ok, sites[0].reason


def test_thread_free_code_helpers_and_macros() -> None:
    ok, reason = free("        y[i] = pure(x[i]) * SCALE + expf(x[i]);")
    assert ok, reason


def test_thread_coordinates_in_the_code_a_helper_or_a_macro_are_refused() -> None:
    ok, reason = free("        y[i] = x[i] * blockDim.x;")
    assert not ok and "reads `blockDim`" in reason
    ok, reason = free("        y[i] = x[i] * LANE;")
    assert not ok and "the macro `LANE`" in reason
    ok, reason = free("        y[i] = outer(x[i]);")  # outer -> lane_of -> LANE
    assert not ok and "`lane_of`" in reason and "reads `threadIdx`" in reason
    ok, reason = free("        __syncwarp();\n        y[i] = x[i];")
    assert not ok and "reads `__syncwarp`" in reason


def test_stores_nothing() -> None:
    probe = PROBE.replace("if ($I < $N) {\n        $$$BODY;\n    }", "$$$PRE;\n    y[0] = 1.0f;")
    probe = probe.replace("if ($I < $N) {\n      $$$BODY;\n    }", "$$$PRE;\n    y[0] = 1.0f;")
    rules = load_rules_text(probe.replace("GUARD", "stores_nothing($$$PRE)"), "p.rule")

    def judge(pre: str) -> tuple[bool, str]:
        src = ("__device__ void helper(float* p) { p[0] = 0.0f; }\n"
               "__global__ void k(float* y, float t, unsigned* c) {\n"
               f"{pre}\n    y[0] = 1.0f;\n}}\n")
        sites = find_sites(parse_bytes(src.encode(), "k.cu"), rules)
        assert sites
        return sites[0].ok, sites[0].reason

    ok, reason = judge("    const float s = cosf(t) * 2.0f;\n    float u = s;\n    u += 1.0f;")
    assert ok, reason
    # an element of a register array the statements declare is the thread's own variable
    ok, reason = judge("    float r[4][2];\n    r[1][0] = t;\n    r[2][1]++;")
    assert ok, reason
    for pre, why in (("    y[1] = t;", "stores to memory"),
                     ("    atomicAdd(c, 1u);", "may store to memory"),
                     ("    helper(y);", "may store to memory"),
                     ("    *c = 0u;", "stores to memory"),
                     ("    __shared__ float s[32];\n    s[0] = t;", "stores to memory"),
                     ("    static float g[4];\n    g[0] = t;", "stores to memory"),
                     ("    float* q[2];\n    q[0] = y;\n    q[0][1] = t;", "stores to memory"),
                     ("    float* q = y;\n    q[1] = t;", "stores to memory")):
        ok, reason = judge(pre)
        assert not ok and why in reason, pre


def test_thread_free_gives_the_same_verdict_every_time() -> None:
    """Judged again and again on files that differ only in the body, the verdicts stay put.
    They did not: the unit's list of call nodes was not always in document order, the
    guards find the calls of a region by bisecting it, and thread_free then saw `outer`'s
    call of `lane_of` inside a body that calls only `pure` (the fourth time round, in CI)."""
    for _ in range(12):
        ok, reason = free("        y[i] = pure(x[i]) * SCALE + expf(x[i]);")
        assert ok, reason
        ok, reason = free("        y[i] = outer(x[i]);")
        assert not ok and "`lane_of`" in reason


def test_call_nodes_are_in_document_order() -> None:
    from klc.analysis.tree import nodes_of

    src = FREE.replace("BODY", "        y[i] = pure(outer(pure(x[i]))) + expf(pure(x[i]));")
    unit = parse_bytes(src.encode(), "k.cu")
    starts = [n.start_byte for n in nodes_of(unit, "call_expression")]
    assert starts == sorted(starts) and len(starts) == 7
