"""The predicates of klc/guards/regblock.py (passes/matmul_regblock.rule and its inverse):
``row_only_via($ROW, $X)``, ``pure_prefix(region)``, ``block_in_spec`` and
``block_y_tiles(TILE, TM)``, each judged through a probe rule at real spellings."""

from __future__ import annotations

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites, spec_of
from klc.rule.ruleset import load_rules_text

PROBE = """
rule probe {{
  kind: skill
  context: global
  anchor: ```
    if ($ROW < $M && $COL < $N) {{
        $T $ACC = $Z;
        for (int $K = 0; $K < $KD; $K++) {{
            $ACC += $A[$IA] * $B[$IB];
        }}
        $$$POST;
    }}
  ```
  guard: {guard}
  rewrite replace: ```
    if ($ROW < $M && $COL < $N) {{
        $$$POST;
    }}
  ```
}}
"""

SPEC = """/* klc-spec
kernel: k
sizes: {M: 64, N: 64, K: 64}
args:
  - {name: A, shape: [M, K], role: in}
  - {name: B, shape: [K, N], role: in}
  - {name: C, shape: [M, N], role: out}
  - {name: M, value: M}
  - {name: N, value: N}
  - {name: K, value: K}
grid: ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block: [16, BY]
*/
"""

ROWCOL = ("    int row = blockIdx.y * blockDim.y + threadIdx.y;\n"
          "    int col = blockIdx.x * blockDim.x + threadIdx.x;\n")


def product(post: str = "C[row * N + col] = s;", a: str = "A[row * K + k]") -> str:
    return (f"    if (row < M && col < N) {{\n        float s = 0.0f;\n"
            f"        for (int k = 0; k < K; k++) {{ s += {a} * B[k * N + col]; }}\n"
            f"        {post}\n    }}\n")


def verdict(guard: str, body: str, head: str = ROWCOL, spec: str | None = SPEC,
            by: int = 16, tail: str = "") -> tuple[bool, str]:
    source = ((spec.replace("BY", str(by)) if spec else "") + "#define TILE 16\n"
              "__global__ void k(float* A, float* B, float* C, int M, int N, int K) {\n"
              f"{head}{body}}}\n{tail}")
    unit = parse_bytes(source.encode(), "k.cu")
    sites = find_sites(unit, load_rules_text(PROBE.format(guard=guard), "p.rule"), None,
                       spec_of(unit))
    assert len(sites) == 1, sites
    return sites[0].ok, sites[0].reason


def test_row_only_via_accepts_the_row_itself_parameters_and_pure_locals() -> None:
    head = ROWCOL + "    const int ldc = N;\n"
    ok, reason = verdict("row_only_via($ROW, $$$POST) and row_only_via($ROW, $IA)",
                         product("C[row * ldc + col] = 2.0f * s;"), head)
    assert ok, reason


def test_row_only_via_refuses_a_local_computed_from_the_row() -> None:
    head = ROWCOL + "    int idx = row * N + col;\n"
    ok, reason = verdict("row_only_via($ROW, $$$POST)", product("C[idx] = s;"), head)
    assert not ok and "`idx`" in reason


def test_row_only_via_refuses_threadIdx_y_and_blockDim_y_in_the_code() -> None:
    for post in ("C[(blockIdx.y * 16 + threadIdx.y) * N + col] = s;",
                 "C[row * N + col] = s * blockDim.y;"):
        ok, reason = verdict("row_only_via($ROW, $$$POST)", product(post))
        assert not ok, post
    ok, reason = verdict("row_only_via($ROW, $$$POST)",
                         product("C[row * N + col] = s + threadIdx.x * 0.0f;"))
    assert ok, reason


def test_row_only_via_takes_a_row_of_any_integer_type() -> None:
    for typ in ("unsigned", "unsigned int", "const unsigned", "size_t", "long", "const long",
                "long long", "int64_t", "uint32_t"):
        head = ROWCOL.replace("int row", f"{typ} row")
        ok, reason = verdict("row_only_via($ROW, $$$POST)", product(), head)
        assert ok, (typ, reason)


def test_row_only_via_refuses_a_row_of_another_type_or_step_or_a_reassigned_row() -> None:
    for typ in ("float", "double", "int*", "float4"):
        ok, reason = verdict("row_only_via($ROW, $$$POST)", product(),
                             ROWCOL.replace("int row", f"{typ} row"))
        assert not ok and "is not declared of an integer type" in reason, (typ, reason)
    for head in (ROWCOL.replace("blockIdx.y * blockDim.y", "blockIdx.y * TILE"),
                 ROWCOL + "    row += 0;\n"):
        ok, reason = verdict("row_only_via($ROW, $$$POST)", product(), head)
        assert not ok, head
    ok, reason = verdict("row_only_via($ROW, $$$POST)", product(),
                         ROWCOL.replace("int row = blockIdx.y * blockDim.y + threadIdx.y",
                                        "const int row = threadIdx.y + blockDim.y * blockIdx.y"))
    assert ok, reason


def test_pure_prefix_accepts_declarations_and_refuses_stores_and_calls() -> None:
    ok, reason = verdict("pure_prefix(anchor)", product(), ROWCOL + "    const int lda = K;\n")
    assert ok, reason
    for extra in ("    C[0] = 0.0f;\n", "    float first = A[0];\n", "    __syncthreads();\n"):
        ok, reason = verdict("pure_prefix(anchor)", product(), ROWCOL + extra)
        assert not ok, extra


def test_block_in_spec_needs_the_spec_block() -> None:
    ok, reason = verdict("block_in_spec", product())
    assert ok, reason
    launch = ("void host(float* A, float* B, float* C) {\n"
              "    k<<<dim3(4, 4), dim3(16, 16)>>>(A, B, C, 64, 64, 64);\n}\n")
    ok, reason = verdict("block_in_spec", product(), spec=None, tail=launch)
    assert not ok and "klc-spec" in reason


def test_block_y_tiles_multiplies_the_block_y_extent() -> None:
    assert verdict("block_y_tiles(16, 4)", product(), by=4)[0]
    assert not verdict("block_y_tiles(16, 4)", product(), by=16)[0]
    assert verdict("block_y_tiles(16, 2)", product(), by=8)[0]


def test_pure_prefix_takes_a_shared_array_and_not_extern_or_initialised_storage() -> None:
    # a block's __shared__ array is storage, not code a thread runs: fewer threads after a
    # launch edit change nothing about it (tile_rows_per_thread shrinks the block below one)
    ok, reason = verdict("pure_prefix(anchor)", product(),
                         ROWCOL + "    __shared__ float tile[16][16 + 1];\n")
    assert ok, reason
    for extra in ("    extern __shared__ float dyn[];\n", "    static __device__ int hits;\n",
                  "    __shared__ float tile[16][16];\n    tile[0][0] = A[0];\n"):
        ok, reason = verdict("pure_prefix(anchor)", product(), ROWCOL + extra)
        assert not ok, extra
