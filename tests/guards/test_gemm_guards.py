"""The predicates of klc/guards/gemm.py (passes/matmul_tiles.rule's inverse):
``thread_index($E, axis)``, ``varies_only_with($E[, $A[, $B]])`` and
``used_only_in($X, region)``, each judged through a probe rule at real spellings; and a
launch's block read from a dim3 variable (klc/analysis/launch.py)."""

from __future__ import annotations

import pytest

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites
from klc.rule.ruleset import load_rules_text


def probe(guard: str) -> str:
    return f"""
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


def verdict(guard: str, body: str, head: str = "") -> tuple[bool, str]:
    source = (f"#define TILE 16\n__global__ void k(const float* A, const float* B, float* C, "
              f"const int* idx, int M, int N, int K) {{\n{head}{body}}}\n")
    sites = find_sites(parse_bytes(source.encode(), "k.cu"), load_rules_text(probe(guard),
                                                                              "p.rule"))
    assert len(sites) == 1, sites
    return sites[0].ok, sites[0].reason


ROWCOL = ("    int row = blockIdx.y * blockDim.y + threadIdx.y;\n"
          "    int col = blockIdx.x * blockDim.x + threadIdx.x;\n")


def product(a: str = "A[row * K + k]", b: str = "B[k * N + col]") -> str:
    return (f"    if (row < M && col < N) {{\n        float s = 0.0f;\n"
            f"        for (int k = 0; k < K; k++) {{ s += {a} * {b}; }}\n"
            f"        C[row * N + col] = s;\n    }}\n")


def test_thread_index_reads_either_declaration_order_and_a_constant_step() -> None:
    head = ("    const int col = threadIdx.x + TILE * blockIdx.x;\n"
            "    const int row = blockIdx.y * TILE + threadIdx.y;\n")
    ok, reason = verdict("thread_index($ROW, y) and thread_index($COL, x)", product(), head)
    assert ok, reason


def test_thread_index_refuses_the_other_axis_and_a_reassigned_index() -> None:
    ok, reason = verdict("thread_index($ROW, x)", product(), ROWCOL)
    assert not ok and "not initialised to blockIdx.x * blockDim.x + threadIdx.x" in reason
    head = ROWCOL + "    row += 1;\n"
    ok, reason = verdict("thread_index($ROW, y)", product(), head)
    assert not ok and "reassigned later" in reason


def test_thread_index_refuses_a_step_that_differs_between_threads() -> None:
    head = ("    int row = blockIdx.y * threadIdx.x + threadIdx.y;\n"
            "    int col = blockIdx.x * blockDim.x + threadIdx.x;\n")
    ok, _ = verdict("thread_index($ROW, y)", product(), head)
    assert not ok
    head = ("#define STEP threadIdx.x\n"
            "    int row = blockIdx.y * STEP + threadIdx.y;\n"
            "    int col = blockIdx.x * blockDim.x + threadIdx.x;\n")
    ok, _ = verdict("thread_index($ROW, y)", product(), head)
    assert not ok  # a macro step: only a known constant counts


def test_varies_only_with_follows_row_pointers_and_transposed_reads() -> None:
    head = ROWCOL + "    const float* a = A + (size_t)row * K;\n    const float* b = B + col * K;\n"
    ok, reason = verdict("varies_only_with($A, $ROW) and varies_only_with($IA, $ROW, $K) and "
                         "varies_only_with($B, $COL) and varies_only_with($IB, $K, $COL) and "
                         "varies_only_with($KD)", product("a[k]", "b[k]"), head)
    assert ok, reason


def test_varies_only_with_refuses_the_other_index_memory_reads_and_changing_locals() -> None:
    ok, reason = verdict("varies_only_with($IA, $ROW, $K)", product("A[row * K + k + col]"),
                         ROWCOL)
    assert not ok and "`col` = `blockIdx.x * blockDim.x + threadIdx.x`" in reason
    ok, reason = verdict("varies_only_with($IA, $ROW, $K)", product("A[idx[row] * K + k]"),
                         ROWCOL)
    assert not ok and "a call, a memory read or a side effect" in reason
    head = ROWCOL + "    int off = 0;\n    off += col;\n"
    ok, reason = verdict("varies_only_with($IA, $ROW, $K)", product("A[row * K + k + off]"),
                         head)
    assert not ok and "assigned after its declaration" in reason


def test_varies_only_with_no_names_asks_for_a_block_uniform_value() -> None:
    ok, reason = verdict("varies_only_with($KD)", product(), ROWCOL)
    assert ok, reason
    body = product().replace("k < K", "k < row")
    ok, reason = verdict("varies_only_with($KD)", body, ROWCOL)
    assert not ok and "agree on nothing" in reason


def test_used_only_in_refuses_a_name_used_outside_the_anchor() -> None:
    ok, reason = verdict("used_only_in($ACC, anchor)", product(), ROWCOL)
    assert ok, reason
    ok, reason = verdict("used_only_in($ACC, anchor)", product() + "    float s = 1.0f;\n"
                         "    C[0] = s;\n", ROWCOL)
    assert not ok and "also used outside" in reason


def launch_verdict(host: str) -> tuple[bool, str]:
    source = ("__global__ void k(const float* A, const float* B, float* C, int M, int N, "
              "int K) {\n" + ROWCOL + product() + "}\n"
              "void run(const float* A, const float* B, float* C, int M, int N, int K) {\n"
              + host + "    k<<<grid, block>>>(A, B, C, M, N, K);\n}\n")
    sites = find_sites(parse_bytes(source.encode(), "k.cu"), load_rules_text(
        probe("block_dim(x, ==, 16) and block_dim(y, ==, 8)"), "p.rule"))
    assert len(sites) == 1, sites
    return sites[0].ok, sites[0].reason


def test_a_launch_reads_the_block_of_a_dim3_variable_declared_once_and_never_changed() -> None:
    grid = "    dim3 grid((N + 15) / 16, (M + 7) / 8);\n"
    for decl in ("dim3 block(16, 8);", "dim3 block{16, 8, 1};", "dim3 block = dim3(16, 8);"):
        ok, reason = launch_verdict(f"    {decl}\n" + grid)
        assert ok, (decl, reason)
    for change in ("block.y = 4;", "block = dim3(8, 8);", "set(&block);", "block.x++;",
                   "set_by_reference(block);"):
        ok, reason = launch_verdict(f"    dim3 block(16, 8);\n    {change}\n" + grid)
        assert not ok and "not a constant" in reason, change
    ok, reason = launch_verdict("    dim3 block(16, 8);\n    if (M > 9) { dim3 block(8, 8); }\n"
                                + grid)
    assert not ok and "not a constant" in reason


@pytest.mark.parametrize("host", [
    # one declarator of several, before or after the grid's
    "    dim3 grid((N + 15) / 16, (M + 7) / 8), block(16, 8);\n",
    "    dim3 block(16, 8), grid((N + 15) / 16, (M + 7) / 8);\n",
    # extents that are bare names: the tree reads `block(BX, BY)` as a function declarator
    "#define BX 16\n#define BY 8\n    dim3 grid((N + 15) / 16, (M + 7) / 8), block(BX, BY);\n",
    "    const dim3 block = {16, 8};\n    dim3 grid((N + 15) / 16, (M + 7) / 8);\n",
])
def test_a_launch_reads_a_dim3_block_in_every_declaration_spelling(host: str) -> None:
    ok, reason = launch_verdict(host)
    assert ok, reason


def test_a_dim3_block_declared_twice_in_one_declaration_list_is_not_read() -> None:
    ok, reason = launch_verdict("    dim3 block(16, 8), grid(1), other(2);\n"
                                "    { dim3 grid(3), block(8, 8); }\n")
    assert not ok and "not a constant" in reason


@pytest.mark.parametrize("host", [
    # a constant of the launching function, in the dim3 or its extents
    "    const int BX = 16, BY = 8;\n    dim3 block(BX, BY);\n"
    "    dim3 grid((N + 15) / 16, (M + 7) / 8);\n",
    "    constexpr int TILE = 16;\n    const int ROWS = TILE / 2;\n"
    "    dim3 block(TILE, ROWS), grid((N + TILE - 1) / TILE, (M + ROWS - 1) / ROWS);\n",
    # a local never assigned after its declaration
    "    int bx = 16;\n    int by = 8;\n    dim3 block(bx, by);\n    dim3 grid(N / bx, M / by);\n",
])
def test_a_launch_reads_the_constants_of_the_function_that_launches(host: str) -> None:
    ok, reason = launch_verdict(host)
    assert ok, reason


@pytest.mark.parametrize("host", [
    "    int bx = 16;\n    dim3 block(bx, 8);\n    bx = 32;\n    dim3 grid(N / 16, M / 8);\n",
    "    int by = 8;\n    by++;\n    dim3 block(16, by);\n    dim3 grid(N / 16, M / 8);\n",
    "    int by = 8;\n    tune(&by);\n    dim3 block(16, by);\n    dim3 grid(N / 16, M / 8);\n",
    "    const int by = M;\n    dim3 block(16, by);\n    dim3 grid(N / 16, 1);\n",
    "    int by = 8;\n    if (M > 64) { int by = 4; }\n    dim3 block(16, by);\n"
    "    dim3 grid(N / 16, M / 8);\n",
])
def test_a_launch_reads_no_local_that_may_change_or_is_not_constant(host: str) -> None:
    ok, reason = launch_verdict(host)
    assert not ok and "not a constant" in reason, reason


@pytest.mark.parametrize(("host", "ok"), [
    ("    const int BX = 16;\n    const int BY = 8;\n", True),  # the launcher's own
    ("    int BX = 16;\n    BX *= 2;\n    const int BY = 8;\n", False),  # it may change
])
def test_a_launchers_local_hides_a_file_constant_of_its_name(host: str, ok: bool) -> None:
    """The file says 32 x 32 (`constexpr int BX = 32, BY = 32;`); the launcher's locals of
    those names are what the launch reads: 16 x 8, or not known where one changes."""
    source = ("constexpr int BX = 32, BY = 32;\n"
              "__global__ void k(const float* A, const float* B, float* C, int M, int N, "
              "int K) {\n" + ROWCOL + product() + "}\n"
              "void run(const float* A, const float* B, float* C, int M, int N, int K) {\n"
              + host + "    dim3 block(BX, BY);\n    dim3 grid(N / 16, M / 8);\n"
              "    k<<<grid, block>>>(A, B, C, M, N, K);\n}\n")
    sites = find_sites(parse_bytes(source.encode(), "k.cu"), load_rules_text(
        probe("block_dim(x, ==, 16) and block_dim(y, ==, 8)"), "p.rule"))
    assert len(sites) == 1 and sites[0].ok == ok, sites[0].reason
    if not ok:
        assert "not a constant" in sites[0].reason
