"""A ``rewrite launch`` edit at the kernel's host launches in the file (klc.edits.host_launch):
the launch changes with the kernel or the kernel is not rewritten."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes
from klc.edits.host_launch import rewrite_argument, scale_text
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.rule import RuleSet, default_skill_dirs

ROW_SUM = """\
__global__ void row_sum(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; c++) {
            s += x[r * cols + c];
        }
        y[r] = s;
    }
}
"""
OTHER = """\
__global__ void fill(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 1.0f;
}
"""
MAIN = """\
int main() {
    int rows = 4096, cols = 1024;
    float *x, *y;
    cudaMalloc(&x, rows * cols * 4);
    cudaMalloc(&y, rows * 4);
    dim3 grid((rows + 255) / 256);
    row_sum<<<(rows + 255) / 256, 256>>>(x, y, rows, cols);
    row_sum<<<grid, 256, 0>>>(x, y, rows, cols);
    fill<<<(rows + 255) / 256, 256>>>(y, rows);
    return 0;
}
"""


def _warp() -> list:  # type: ignore[type-arg]
    return [r for r in RuleSet.load(default_skill_dirs()).rules
            if r.name == "thread_per_row_to_warp_per_row"]


def test_scale_text() -> None:
    assert scale_text("256", "x", "/", 4) == "64"
    assert scale_text(" 100 ", "x", "/", 32) == "4"  # rounds up, as ceil_div
    assert scale_text("8u", "x", "*", 32) == "256"
    assert scale_text("grid", "x", "*", 32) == (
        "[&] { dim3 klc_dims(grid); klc_dims.x *= 32u; return klc_dims; }()")
    assert scale_text("16", "y", "/", 4) == (
        "[&] { dim3 klc_dims(16); klc_dims.y = (klc_dims.y + 3u) / 4u; return klc_dims; }()")


@pytest.mark.parametrize(("text", "dim", "change", "want"), [
    # ceiling divisions keep their spelling, the divisor scaled
    ("(n + 255) / 256", "grid", ("x", "/", 4), "(n + 1023) / 1024"),
    ("(n+255)/256u", "grid", ("x", "/", 4), "(n + 1023) / 1024"),
    ("(rows + BLOCK - 1) / BLOCK", "grid", ("x", "/", 32),
     "(rows + BLOCK * 32 - 1) / (BLOCK * 32)"),
    ("CEIL_DIV(M, BLOCKSIZE)", "grid", ("x", "/", 4), "CEIL_DIV(M, BLOCKSIZE * 4)"),
    ("cdiv(n, 128)", "grid", ("x", "/", 2), "cdiv(n, 256)"),
    ("(N - 1) / TILE_WIDTH + 1", "grid", ("x", "/", 2), "(N - 1) / (TILE_WIDTH * 2) + 1"),
    # a product of the whole extent, parenthesised where the operators need it
    ("(rows + BLOCK - 1) / BLOCK", "grid", ("x", "*", 32), "(rows + BLOCK - 1) / BLOCK * 32"),
    ("n / 256 + 1", "grid", ("x", "*", 4), "(n / 256 + 1) * 4"),
    ("ceil_div(n, 256)", "grid", ("x", "*", 4), "ceil_div(n, 256) * 4"),
    # an axis the argument did not spell is added; a dim3 argument keeps its form
    ("THREADS", "block", ("y", "*", 32), "dim3(THREADS, 32)"),
    ("256", "block", ("y", "*", 4), "dim3(256, 4)"),
    ("dim3(BS, BS)", "block", ("y", "/", 4), "dim3(BS, BS / 4)"),
    ("dim3(32, 32, 1)", "block", ("x", "/", 2), "dim3(16, 32, 1)"),
    # no sum that only looks like a ceiling division is rewritten as one
    ("(a + 255) / 256 + (b + 1) / 2", "grid", ("x", "/", 4),
     "((a + 255) / 256 + (b + 1) / 2 + 3) / 4"),
    # a name that may be a dim3, or a call that may return one: the lambda
    ("grid", "grid", ("x", "*", 4),
     "[&] { dim3 klc_dims(grid); klc_dims.x *= 4u; return klc_dims; }()"),
    ("make_grid(n)", "grid", ("x", "/", 2),
     "[&] { dim3 klc_dims(make_grid(n)); klc_dims.x = (klc_dims.x + 1u) / 2u; "
     "return klc_dims; }()"),
])
def test_an_argument_keeps_its_spelling(text: str, dim: str, change: tuple[str, str, int],
                                        want: str) -> None:
    assert rewrite_argument(text, dim, [(dim, *change)]) == want


def test_every_launch_of_the_kernel_takes_the_change_and_no_other() -> None:
    unit = parse_bytes((ROW_SUM + OTHER + MAIN).encode(), "k.cu")
    out = apply_rules(unit, _warp())
    text = out.source.decode()
    assert out.changed and "/ 32;" in text
    assert "row_sum<<<(rows + 255) / 256 * 32, 256>>>(x, y, rows, cols);" in text
    # the dim3 only row_sum's launch reads: its declaration changes, the launch reads it
    assert "dim3 grid((rows + 255) / 256 * 32);" in text
    assert "row_sum<<<grid, 256, 0>>>(x, y, rows, cols);" in text
    assert "fill<<<(rows + 255) / 256, 256>>>(y, rows);" in text  # another kernel's launch
    assert not out.notes


def test_a_dim3_declared_beside_another_has_its_own_declarator_rewritten() -> None:
    for decl, want in (
            ("dim3 threads(256), grid((rows + 255) / 256);",
             "dim3 threads(256), grid((rows + 255) / 256 * 32);"),
            ("dim3 grid{(rows + 255) / 256}, spare(7);",
             "dim3 grid{(rows + 255) / 256 * 32}, spare(7);")):
        main = MAIN.replace("dim3 grid((rows + 255) / 256);", decl)
        text = apply_rules(parse_bytes((ROW_SUM + OTHER + main).encode(), "k.cu"),
                           _warp()).source.decode()
        assert want in text, text
        assert "row_sum<<<grid, 256, 0>>>(x, y, rows, cols);" in text


def test_a_dim3_another_launch_shares_is_read_at_the_launch() -> None:
    shared = MAIN.replace("fill<<<(rows + 255) / 256, 256>>>", "fill<<<grid, 256>>>")
    text = apply_rules(parse_bytes((ROW_SUM + OTHER + shared).encode(), "k.cu"),
                       _warp()).source.decode()
    assert "dim3 grid((rows + 255) / 256);" in text  # fill still launches on it
    assert "row_sum<<<dim3(grid.x * 32, grid.y, grid.z), 256, 0>>>" in text
    assert "fill<<<grid, 256>>>(y, rows);" in text


def test_a_dim3_assigned_after_its_declaration_is_read_at_the_launch() -> None:
    later = MAIN.replace("    row_sum<<<(rows", "    grid.y = 1;\n    row_sum<<<(rows")
    text = apply_rules(parse_bytes((ROW_SUM + OTHER + later).encode(), "k.cu"),
                       _warp()).source.decode()
    assert "dim3 grid((rows + 255) / 256);" in text
    assert "row_sum<<<dim3(grid.x * 32, grid.y, grid.z), 256, 0>>>" in text


def test_launches_in_other_functions_and_macro_sizes() -> None:
    """Each launch of the kernel takes the change, in whichever host function it stands, in
    the spelling it has: a CEIL_DIV macro, a dim3 variable, a literal."""
    host = ("#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))\n"
            "void small(const float* x, float* y, int rows, int cols) {\n"
            "    row_sum<<<CEIL_DIV(rows, 256), 256>>>(x, y, rows, cols);\n}\n"
            "void large(const float* x, float* y, int rows, int cols, cudaStream_t s) {\n"
            "    dim3 blocks(CEIL_DIV(rows, 256));\n    dim3 threads(256);\n"
            "    row_sum<<<blocks, threads, 0, s>>>(x, y, rows, cols);\n}\n")
    text = apply_rules(parse_bytes((ROW_SUM + host).encode(), "k.cu"), _warp()).source.decode()
    assert "row_sum<<<CEIL_DIV(rows, 256) * 32, 256>>>(x, y, rows, cols);" in text
    assert "dim3 blocks(CEIL_DIV(rows, 256) * 32);" in text
    assert "dim3 threads(256);" in text and "row_sum<<<blocks, threads, 0, s>>>" in text


def test_a_kernel_launched_nowhere_in_the_file_is_not_rewritten() -> None:
    """elementwise_grid_stride needs no block size (a grid-stride loop is right on any grid):
    its guards hold here, and only the launch it cannot record stops it."""
    relu = ("__global__ void relu_(float* out, const float* in, size_t n) {\n"
            "    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (i >= n) return;\n    out[i] = in[i] > 0.0f ? in[i] : 0.0f;\n}\n")
    rules = [r for r in RuleSet.load(default_skill_dirs()).rules
             if r.name == "elementwise_grid_stride"]
    unit = parse_bytes(relu.encode(), "k.cu")
    out = apply_rules(unit, rules)
    assert not out.changed and not out.skipped
    want = ("its rewrite changes the launch (grid.x /= ?factor), but this file neither "
            "launches `relu_` nor records its launch in a klc-spec: the callers elsewhere "
            "would launch the new kernel as before")
    assert [s.reason for s in out.refused] == [want]
    # klc list says so too: the site is refused where it is found
    assert [(s.ok, s.reason) for s in find_sites(unit, rules)] == [(False, want)]
    main = "int main() { float *a, *b; relu_<<<4096, 256>>>(a, b, 1 << 20); return 0; }\n"
    out = apply_rules(parse_bytes((relu + main).encode(), "k.cu"), rules)
    assert out.changed and "relu_<<<256, 256>>>(a, b, 1 << 20);" in out.source.decode()


def test_a_spec_records_the_launch() -> None:
    spec = ("/* klc-spec\nkernel: row_sum\nsizes: {rows: 4096, cols: 1024}\nargs:\n"
            "  - {name: x, shape: [rows, cols], role: in}\n  - {name: y, shape: [rows], "
            "role: out}\n  - {name: rows, value: rows}\n  - {name: cols, value: cols}\n"
            "grid: [\"ceil_div(rows, 256)\"]\nblock: [256]\n*/\n")
    unit = parse_bytes((spec + ROW_SUM).encode(), "k.cu")
    out = apply_rules(unit, _warp(), None, spec_of(unit))
    assert out.changed and "(ceil_div(rows, 256)) * 32" in out.source.decode()
    # no launch in the file: the spec changed, and the outcome says so
    assert out.notes == ["`row_sum` is launched nowhere in this file: only its klc-spec's "
                         "launch changed (grid.x *= 32); its callers elsewhere must launch "
                         "it so"]


def test_a_launch_through_a_macro_is_refused() -> None:
    """A launch the parser sees only as a macro call is no launch klc can edit: the kernel
    counts as launched nowhere in the file."""
    relu = ("__global__ void relu_(float* out, const float* in, size_t n) {\n"
            "    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (i < n) out[i] = in[i] > 0.0f ? in[i] : 0.0f;\n}\n"
            "#define LAUNCH(k, g) k<<<g, 256>>>\n"
            "int main() { float *a, *b; LAUNCH(relu_, 64)(a, b, 1 << 14); return 0; }\n")
    rules = [r for r in RuleSet.load(default_skill_dirs()).rules
             if r.name == "elementwise_grid_stride"]
    out = apply_rules(parse_bytes(relu.encode(), "k.cu"), rules)
    assert not out.changed
    assert any("neither launches `relu_`" in s.reason for s in out.refused)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc on PATH (the rewritten host "
                    "code is checked by bench/soundness.py on the device machine)")
def test_the_rewritten_file_compiles_with_nvcc(tmp_path: Path) -> None:
    unit = parse_bytes((ROW_SUM + OTHER + MAIN).encode(), "k.cu")
    src = tmp_path / "k.cu"
    src.write_bytes(apply_rules(unit, _warp()).source)
    r = subprocess.run(["nvcc", "-std=c++17", "-c", str(src), "-o", str(tmp_path / "k.o")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


def _swap() -> list:  # type: ignore[type-arg]
    return [r for r in RuleSet.load(default_skill_dirs()).rules
            if r.name == "swap_thread_roles_for_coalescing"]


NAIVE_2D = """\
__global__ void mm(const float* A, const float* B, float* C, int M, int N, int K) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
"""


@pytest.mark.parametrize(("launch", "want"), [
    ("mm<<<dim3((M + 15) / 16, (N + 15) / 16), dim3(16, 16)>>>",
     "mm<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16)>>>"),
    ("mm<<<grid, dim3(16, 16)>>>",
     "mm<<<[&] { dim3 klc_dims(grid); unsigned int klc_t = klc_dims.x; klc_dims.x = "
     "klc_dims.y; klc_dims.y = klc_t; return klc_dims; }(), dim3(16, 16)>>>"),
])
def test_a_swap_exchanges_the_grids_extents(launch: str, want: str) -> None:
    host = ("void run(const float* A, const float* B, float* C, int M, int N, int K, "
            f"dim3 grid) {{\n    {launch}(A, B, C, M, N, K);\n}}\n")
    out = apply_rules(parse_bytes((NAIVE_2D + host).encode(), "k.cu"), _swap())
    assert out.changed, [s.reason for s in out.refused]
    assert want in out.source.decode()


def test_a_swap_in_the_spec() -> None:
    from klc.spec.launch import swap_launch

    spec = (b'/* klc-spec\nkernel: k\ngrid: ["ceil_div(M, 32)", "ceil_div(N, 32)"]\n'
            b'block: [32, 32]\n*/\n')
    assert b'grid: ["ceil_div(N, 32)", "ceil_div(M, 32)"]\n' in swap_launch(spec, "grid", "x", "y")
    # a missing axis is 1; a trailing 1 is dropped
    one = b'/* klc-spec\nkernel: k\ngrid: [G]\nblock: [256]\n*/\n'
    assert b"grid: [1, G]\n" in swap_launch(one, "grid", "x", "y")
    assert b"grid: [G]\n" in swap_launch(swap_launch(one, "grid", "x", "y"), "grid", "x", "y")


@pytest.mark.parametrize(("edit", "why"), [
    ("grid.x <-> block.y", "a swap exchanges two axes of the same grid or block"),
    ("grid.x <-> grid.x", "a swap exchanges two axes of the same grid or block"),
])
def test_a_bad_swap_is_refused_at_its_place(edit: str, why: str) -> None:
    from klc.rule import RuleError, load_rules_text

    text = ('rule t {\n  kind: skill\n  description: "t"\n  context: global\n'
            '  anchor: ```\n    $Y[$I] = $E;\n  ```\n'
            f'  rewrite launch {edit}\n}}\n')
    with pytest.raises(RuleError) as e:
        load_rules_text(text, "t.rule")
    assert "t.rule:8:" in str(e.value) and why in str(e.value)


def test_editable_spans_name_the_dim3_declarations_a_launch_reads() -> None:
    from klc.edits.host_launch import editable_spans

    unit = parse_bytes((ROW_SUM + OTHER + MAIN).encode(), "k.cu")
    texts = [[unit.source[s:e].decode() for s, e in editable_spans(unit, lc)]
             for lc in unit.launches]
    assert texts[0] == ["(rows + 255) / 256", "256"]
    assert texts[1] == ["grid", "256", "(rows + 255) / 256"]  # dim3 grid((rows + 255) / 256)
