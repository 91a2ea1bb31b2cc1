"""The predicates of passes/grid_reduce.rule (klc/guards/gridred.py): ``grid_dim`` (the
grid known from the spec or the launches), ``block_dim_power_of_two``, ``uniform_but`` (a
loop that reads no thread-dependent variable but its index and its sum),
``reads_first_only`` and ``size_at_most`` (a bound the spec's sizes keep small)."""

from __future__ import annotations

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites, spec_of
from klc.rule.ruleset import load_rules_text

PROBE = """
rule probe {
  kind: skill
  anchor: ```
    for ($IT $I = $T; $I < $N; $I += blockDim.x) {
        $$$LOOP;
        $S += $E;
    }
  ```
  guard: GUARD
  rewrite replace: ```
    for ($IT $I = $T; $I < $N; $I += blockDim.x) {
        $$$LOOP;
        $S += $E;
    }
  ```
}
"""

KERNEL = """__global__ void k(const float* x, const float* w, float* out, int n) {
    int lane = threadIdx.x % 32;
    float scale = 2.0f;
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        float v = x[i] * scale;
        s += BODY;
    }
    out[threadIdx.x] = s + lane;
}
"""


def spec(grid: str = "[1]", block: str = "[256]", n: str = "1024",
         verify: str = "") -> str:
    return ("/* klc-spec\nkernel: k\nsizes: {n: " + n + "}\n" + verify + "args:\n"
            "  - {name: x, shape: [n], role: in}\n  - {name: w, shape: [32], role: in}\n"
            "  - {name: out, shape: [256], role: out}\n"
            f"  - {{name: n, value: n}}\ngrid: {grid}\nblock: {block}\n*/\n")


def verdict(source: str, guard: str) -> tuple[bool, str]:
    unit = parse_bytes(source.encode(), "k.cu")
    rules = load_rules_text(PROBE.replace("GUARD", guard), "p.rule")
    sites = find_sites(unit, rules, None, spec_of(unit))
    assert len(sites) == 1
    return sites[0].ok, sites[0].reason


def kernel(body: str = "v") -> str:
    return KERNEL.replace("BODY", body)


def test_grid_dim_from_the_spec() -> None:
    assert verdict(spec() + kernel(), "grid_dim(x, ==, 1)")[0]
    assert verdict(spec(grid="[1, 1, 1]") + kernel(), "grid_dim(z, ==, 1)")[0]
    ok, reason = verdict(spec(grid="[4]") + kernel(), "grid_dim(x, ==, 1)")
    assert not ok and "grid.x is 4" in reason
    ok, reason = verdict(spec(grid='["ceil_div(n, 256)"]') + kernel(), "grid_dim(x, ==, 1)")
    assert not ok and "grid.x is 4" in reason


def test_grid_dim_from_the_launches_or_unknown() -> None:
    host = ("void run(const float* x, const float* w, float* o) {\n"
            "    k<<<1, 256>>>(x, w, o, 7);\n}\n")
    assert verdict(kernel() + host, "grid_dim(x, ==, 1)")[0]
    other = host.replace("k<<<1, 256>>>(x, w, o, 7);",
                         "k<<<1, 256>>>(x, w, o, 7);\n    k<<<2, 256>>>(x, w, o, 7);")
    ok, reason = verdict(kernel() + other, "grid_dim(x, ==, 1)")
    assert not ok and "no one constant grid" in reason
    ok, reason = verdict(kernel(), "grid_dim(x, ==, 1)")
    assert not ok and "not known exactly" in reason


def test_block_dim_power_of_two() -> None:
    assert verdict(spec(block="[1024]") + kernel(), "block_dim_power_of_two(x)")[0]
    ok, reason = verdict(spec(block="[768]") + kernel(), "block_dim_power_of_two(x)")
    assert not ok and "not a power of two" in reason


def test_uniform_but_takes_the_index_the_sum_and_the_loop_s_own_locals() -> None:
    assert verdict(spec() + kernel(), "uniform_but($E, $I, $S)")[0]
    assert verdict(spec() + kernel(), "uniform_but($$$LOOP, $I, $S)")[0]
    assert verdict(spec() + kernel("v * w[i % 32]"), "uniform_but($E, $I, $S)")[0]


def test_uniform_but_refuses_a_thread_dependent_variable() -> None:
    ok, reason = verdict(spec() + kernel("v * w[lane]"), "uniform_but($E, $I, $S)")
    assert not ok and "`lane`" in reason and "threadIdx.x % 32" in reason
    # the whole loop is judged: the term's own code may be clean
    ok, reason = verdict(spec() + kernel("v").replace("x[i] * scale", "x[i] * lane"),
                         "uniform_but($E, $I, $S)")
    assert not ok and "`lane`" in reason


def test_size_at_most_reads_the_spec_sizes() -> None:
    assert verdict(spec(n="1024") + kernel(), "size_at_most($N, 2000000000)")[0]
    ok, reason = verdict(spec(n="2147000000") + kernel(), "size_at_most($N, 2000000000)")
    assert not ok and "reaches 2147000000" in reason
    big_verify = "verify_sizes:\n  - {n: 2100000000}\n"
    ok, reason = verdict(spec(n="1024", verify=big_verify) + kernel(),
                         "size_at_most($N, 2000000000)")
    assert not ok and "reaches 2100000000" in reason
    ok, reason = verdict(kernel(), "size_at_most($N, 2000000000)")
    assert not ok and "spec's sizes" in reason


EPI = """
rule probe {
  kind: skill
  anchor: ```
    $SH[threadIdx.x] = 1.0f;
    __syncthreads();
    if (threadIdx.x == 0) {
        $$$EPI;
    }
  ```
  guard: reads_first_only($$$EPI, $SH)
  rewrite replace: ```
    $SH[threadIdx.x] = 1.0f;
    __syncthreads();
    if (threadIdx.x == 0) {
        $$$EPI;
    }
  ```
}
"""


def epi_verdict(epilogue: str) -> tuple[bool, str]:
    src = ("__global__ void k(float* out) {\n    __shared__ float buf[64];\n"
           "    buf[threadIdx.x] = 1.0f;\n    __syncthreads();\n"
           "    if (threadIdx.x == 0) {\n        " + epilogue + "\n    }\n}\n")
    unit = parse_bytes(src.encode(), "k.cu")
    sites = find_sites(unit, load_rules_text(EPI, "p.rule"), None, None)
    assert len(sites) == 1
    return sites[0].ok, sites[0].reason


def test_reads_first_only() -> None:
    assert epi_verdict("out[0] = buf[0] / 4.0f;")[0]
    ok, reason = epi_verdict("out[0] = buf[0] + buf[1];")
    assert not ok and "other than as `buf[0]`" in reason
    ok, reason = epi_verdict("float* p = buf; out[0] = p[0];")
    assert not ok and "other than as `buf[0]`" in reason


SUB = EPI.replace("guard: reads_first_only($$$EPI, $SH)", "guard: subscripted_only($SH)")


def sub_verdict(pre: str, epilogue: str = "out[0] = buf[0];") -> tuple[bool, str]:
    src = ("__global__ void k(float* out) {\n    __shared__ float buf[64];\n    " + pre +
           "\n    buf[threadIdx.x] = 1.0f;\n    __syncthreads();\n"
           "    if (threadIdx.x == 0) {\n        " + epilogue + "\n    }\n}\n")
    unit = parse_bytes(src.encode(), "k.cu")
    sites = find_sites(unit, load_rules_text(SUB, "p.rule"), None, None)
    assert len(sites) == 1
    return sites[0].ok, sites[0].reason


def test_subscripted_only() -> None:
    assert sub_verdict("float z = 0.0f;")[0]
    ok, reason = sub_verdict("const float* cells = buf;", "out[0] = cells[1];")
    assert not ok and "used other than subscripted" in reason
    ok, reason = sub_verdict("float* p = &buf[1];", "out[0] = p[0];")
    assert not ok and "address of `buf[...]` is taken" in reason
