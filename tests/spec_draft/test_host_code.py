"""`klc spec init` on host code as training, inference and sample code spell it: launchers
whose sizes are their parameters, `#define`d sizes, `dim3` variables and their axes,
`block_size` locals, `CEIL_DIV`-style macros, configuration fields read at run time, scalar
arguments given at the call site, element types behind typedefs, `using` aliases, macros and
`-D` switches in headers found through `-I`. Every value the file does not give is chosen and
the draft says why. (The kernels are written here; none is copied from anywhere.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cli import main
from klc.cuda import flags
from klc.cuda.parse import parse_bytes
from klc.spec import check_spec, load_spec
from klc.spec_draft import draft_spec, with_block


@pytest.fixture(autouse=True)
def _no_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(flags.ENV, raising=False)


def drafted(src: str, path: str = "k.cu", kernel: str | None = None):  # type: ignore[no-untyped-def]
    d = draft_spec(parse_bytes(src.encode(), path), kernel)
    full = with_block(src.encode(), d.text)
    spec = load_spec(full, path)
    assert spec is not None, d.text
    check_spec(spec, parse_bytes(full, path))
    return d, spec


def args_of(spec):  # type: ignore[no-untyped-def]
    return {a.name: a for a in spec.args}


# a library-style launcher: its sizes are its parameters, and nothing in the file calls it
LAUNCHER = """#define CEIL_DIV(M, N) (((M) + (N) - 1) / (N))
__global__ void bias_gelu_kernel(float* out, const float* inp, const float* bias, int N, int OC) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        float x = inp[i] + bias[i % OC];
        out[i] = x / (1.0f + __expf(-1.702f * x));
    }
}
void bias_gelu(float* out, const float* inp, const float* bias, int B, int T, int C) {
    int block_size = 512;
    const int N = B * T * C;
    bias_gelu_kernel<<<CEIL_DIV(N, block_size), block_size>>>(out, inp, bias, N, C);
}
"""


def test_launcher_parameters_are_sizes_with_chosen_values() -> None:
    d, spec = drafted(LAUNCHER)
    assert d.host_launch
    # C, passed straight to the kernel's OC, takes the kernel's name for it
    assert list(spec.block) == ["512"] and list(spec.grid) == ["ceil_div(B * T * OC, 512)"]
    a = args_of(spec)
    assert a["N"].value == "B * T * OC" and a["OC"].value == "OC"
    assert sorted(a["out"].shape) == ["B", "OC", "T"] and list(a["bias"].shape) == ["OC"]
    for name in ("B", "T", "OC"):
        assert name in spec.sizes
        assert f"# guessed: sizes.{name}: " in d.text
    assert ("B is a parameter of bias_gelu, which nothing in the file calls; chosen so that "
            "the largest buffer is about 2^24 elements") in d.text


# sample code: sizes and block from #defines, a dim3 grid, an unguarded index
DEFINES = """#include <cuda_runtime.h>
#include <stdio.h>
#define N (1 << 22)
#define THREADS 128
__global__ void block_sums(const float* in, float* partial) {
    __shared__ float s[THREADS];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[t] = in[i];
    __syncthreads();
    for (unsigned int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = s[0];
}
int main() {
    float *in, *partial;
    cudaMalloc(&in, N * sizeof(float));
    cudaMalloc(&partial, N / THREADS * sizeof(float));
    dim3 grid(N / THREADS);
    dim3 block(THREADS);
    block_sums<<<grid, block>>>(in, partial);
    printf("done\\n");
    return 0;
}
"""


def test_defines_and_dim3_give_sizes_and_an_unguarded_index_its_extent() -> None:
    d, spec = drafted(DEFINES)
    assert d.host_launch and spec.sizes == {"N": 1 << 22}
    assert list(spec.block) == ["128"] and list(spec.grid) == ["N // 128"]
    a = args_of(spec)
    assert list(a["in"].shape) == ["N // 128 * 128"]  # one element per launched thread
    assert list(a["partial"].shape) == ["N // 128"] and a["partial"].role == "out"
    assert not d.todo


# dim3 variables of variables (C++ parses "dim3 block(bx, by)" as a declaration), their
# axes in the grid, a size reassigned from argv, scalars given at the call site
MATRIX = """#include <stdlib.h>
__global__ void scale_add(float* y, const float* x, int nx, int ny, float alpha, float beta) {
    int ix = threadIdx.x + blockDim.x * blockIdx.x;
    int iy = threadIdx.y + blockDim.y * blockIdx.y;
    if (ix < nx && iy < ny) y[iy * nx + ix] = alpha * x[iy * nx + ix] + beta * y[iy * nx + ix];
}
int main(int argc, char** argv) {
    int nx = 1 << 11;
    int ny = 1 << 10;
    if (argc > 1) nx = atoi(argv[1]);
    int bx = 32, by = 16;
    float *x, *y;
    dim3 block(bx, by);
    dim3 grid((nx - 1) / block.x + 1, (ny - 1) / block.y + 1);
    scale_add<<<grid, block>>>(y, x, nx, ny, 0.5f, 1e-3f);
    return 0;
}
"""


def test_dim3_axes_reassigned_sizes_and_call_site_scalars() -> None:
    d, spec = drafted(MATRIX)
    assert d.host_launch and spec.sizes == {"nx": 2048, "ny": 1024}
    assert list(spec.block) == ["32", "16"]
    assert list(spec.grid) == ["(nx - 1) // 32 + 1", "(ny - 1) // 16 + 1"]
    a = args_of(spec)
    assert a["alpha"].value == "0.5" and a["beta"].value == "0.001"
    assert list(a["y"].shape) == ["nx", "ny"] or list(a["y"].shape) == ["ny", "nx"]
    assert a["y"].role == "inout"
    assert "nx is assigned again at 10:19; the draft takes its first value, 1 << 11" in d.text


# inference code: sizes are fields of a configuration read at run time; a float computed on
# the host (1 / sqrt(head_size)) from them
CONFIG = """struct Config { int dim; int n_heads; int seq_len; };
__global__ void scale_scores(float* att, int n, float scale) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) att[i] *= scale;
}
void attention(float* att, Config* p, int pos) {
    int head_size = p->dim / p->n_heads;
    scale_scores<<<(p->seq_len + 255) / 256, 256>>>(att, p->seq_len, 1.0f / sqrtf(64.0f));
}
"""


def test_runtime_configuration_fields_are_free_sizes_named_after_the_kernel() -> None:
    d, spec = drafted(CONFIG)
    assert d.host_launch and set(spec.sizes) == {"n"}  # p->seq_len, named as the kernel does
    assert list(spec.grid) == ["(n + 255) // 256"]
    assert args_of(spec)["scale"].value == "0.125"
    assert "p->seq_len is read at run time" in d.text


FIXED = """#define BDIM 64
__global__ void shfl_sum(const int* in, int* out) {
    int v = in[threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if ((threadIdx.x & 31) == 0) out[threadIdx.x / 32] = v;
}
int main() {
    int *in, *out;
    shfl_sum<<<1, BDIM>>>(in, out);
    return 0;
}
"""


def test_a_fixed_launch_is_verified_at_its_one_size() -> None:
    _, spec = drafted(FIXED)
    assert spec.sizes == {"n": 64} and spec.verify_sizes == ({"n": 64},)
    assert list(args_of(spec)["in"].shape) == ["n"] and list(args_of(spec)["out"].shape) == ["2"]


SHIFT = """__global__ void add(const float* a, const float* b, float* c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    c[i] = a[i] + b[i];
}
int main(int argc, char** argv) {
    int power = 10;
    int n = 1 << power;
    float *a, *b, *c;
    dim3 block(1024);
    dim3 grid(n / block.x);
    add<<<grid, block>>>(a, b, c);
    return 0;
}
"""


def test_a_shift_count_size_keeps_verify_sizes_that_launch() -> None:
    d, spec = drafted(SHIFT)
    assert spec.sizes == {"power": 10} and list(spec.grid) == ["(1 << power) // 1024"]
    assert spec.verify_sizes == ({"power": 10},)
    assert "verify_sizes: the gate's default {'power': 7} gives an empty grid" in d.text


def test_a_launch_it_cannot_read_is_not_used_and_says_why() -> None:
    src = SHIFT.replace("dim3 block(1024);", "dim3 block(pick_block());")
    d = draft_spec(parse_bytes(src.encode(), "k.cu"))
    assert not d.host_launch and d.todo  # an unguarded index and no launch: grid unknown
    assert "is not used: klc cannot read grid (calls pick_block); block (calls pick_block)" \
        in d.text


# element types: a typedef in a header found through -I (the header has host code), a using
# alias, a macro, a -D switch
HEADER = """#pragma once
#include <stdio.h>
#include <stdlib.h>
#ifdef ENABLE_BF16
#include <cuda_bf16.h>
typedef __nv_bfloat16 floatX;
#else
typedef float floatX;
#endif
static void cuda_check(int err, const char* file, int line) {
    if (err) { printf("error %d at %s:%d\\n", err, file, line); exit(1); }
}
"""
TYPED = """#include "common.h"
__global__ void residual(floatX* out, const floatX* a, const floatX* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
int main() {
    int n = 1 << 20;
    floatX *out, *a, *b;
    residual<<<n / 256, 256>>>(out, a, b, n);
    return 0;
}
"""


def _project(tmp_path: Path) -> Path:
    inc = tmp_path / "include"
    inc.mkdir()
    (inc / "common.h").write_text(HEADER)
    src = tmp_path / "src"
    src.mkdir()
    (src / "residual.cu").write_text(TYPED)
    return src / "residual.cu"


def test_typedef_in_a_header_through_include_and_a_switch(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    k = _project(tmp_path)
    # without -I the type is unknown: a one-line error naming the parameter and the remedy
    assert main(["spec", "init", str(k)]) == 2
    err = capsys.readouterr().err
    assert "parameter out has type 'floatX*'" in err and "-I/-D" in err
    assert main(["spec", "init", "-I", str(tmp_path / "include"), str(k)]) == 0
    out, err = capsys.readouterr()
    assert "# guessed: args.out: floatX* is float (the compiler (float *))" in out
    assert main(["spec", "init", "-I", str(tmp_path / "include"), "-D", "ENABLE_BF16",
                 str(k), "-o", str(tmp_path / "src" / "drafted.cu")]) == 0
    out, _ = capsys.readouterr()
    assert "floatX* is __nv_bfloat16" in out
    # the drafted file checks with the same switch, and compiles in the gate: the header's
    # host code (stdio, printf, exit) is blanked in a copy searched first
    assert main(["spec", "check", "-I", str(tmp_path / "include"), "-D", "ENABLE_BF16",
                 str(tmp_path / "src" / "drafted.cu")]) == 0
    assert main(["gate", "-I", str(tmp_path / "include"), "-D", "ENABLE_BF16",
                 str(tmp_path / "src" / "drafted.cu"), "--stages", "compile"]) == 0, \
        capsys.readouterr()


@pytest.mark.parametrize("alias", [
    "using floatX = float;",
    "#define floatX float",
    "typedef float floatX;",
])
def test_aliases_in_the_file(alias: str) -> None:
    d, spec = drafted(alias + "\n" + TYPED.replace('#include "common.h"\n', ""))
    bound = check_spec(spec, parse_bytes(with_block((alias + "\n" + TYPED.replace(
        '#include "common.h"\n', "")).encode(), d.text), "k.cu"))
    assert [b.ctype.dtype for b in bound.args[:3]] == ["float32"] * 3


def test_byte_order_mark_stays_first(tmp_path: Path) -> None:
    k = tmp_path / "bom.cu"
    k.write_bytes(b"\xef\xbb\xbf" + LAUNCHER.encode())
    assert main(["spec", "init", str(k), "--in-place"]) == 0
    data = k.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf/* klc-spec\n") and data.count(b"\xef\xbb\xbf") == 1


TORCH_STYLE = """__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
void relu(const Tensor& x, Tensor& y) {
    const int threads = 256;
    relu_kernel<<<(x.numel() + threads - 1) / threads, threads>>>(x.data(), y.data(),
                                                                  x.numel());
}
"""


def test_a_value_from_a_method_call_is_a_free_size() -> None:
    d, spec = drafted(TORCH_STYLE)
    # the argument x.numel() is the kernel's n, chosen, and the grid reads the same n
    assert d.host_launch and list(spec.grid) == ["(n + 256 - 1) // 256"]
    assert list(spec.block) == ["256"] and list(spec.sizes) == ["n"]
    assert "the launch passes x.numel(), which calls x.numel()" in d.text
