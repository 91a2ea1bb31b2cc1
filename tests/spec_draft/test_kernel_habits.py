"""`klc spec init` on kernels as sample and training code spells them: ``f(void)``, a
reduction whose loop counts down (``stride >>= 1``) over a block's slice of the input, locals
declared first and assigned later (and again, for another use), one name declared in two
loops, sizes that are ``#define``d constants in the kernel's indices, a grid-stride ``while``
loop, and a buffer reached as an atomic's address. Each drafts a spec that checks and
compiles; where a local's value cannot be told at a read (a write under a condition, a write
on the loop's next trip), the draft still says TODO. (The kernels are written here.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda import flags
from klc.cuda.parse import parse_bytes
from klc.gate.compile import compile_unit
from klc.spec import check_spec, load_spec
from klc.spec_draft import draft_spec, with_block
from klc.spec_draft.exprs import evaluate_or_none


@pytest.fixture(autouse=True)
def _no_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(flags.ENV, raising=False)


def drafted(src: str, kernel: str | None = None, path: str = "k.cu"):  # type: ignore[no-untyped-def]
    d = draft_spec(parse_bytes(src.encode(), path), kernel)
    assert not d.todo, d.todo
    full = with_block(src.encode(), d.text)
    spec = load_spec(full, path)
    assert spec is not None, d.text
    check_spec(spec, parse_bytes(full, path))
    return d, spec, full


def shapes(spec):  # type: ignore[no-untyped-def]
    return {a.name: list(a.shape) for a in spec.args if a.shape is not None}


def compiles(full: bytes, tmp_path: Path, kernel: str) -> None:
    path = tmp_path / "k.cu"
    path.write_bytes(full)
    r = compile_unit(parse_bytes(full, str(path)), arch="sm_90", name_expressions=(kernel,))
    assert r.ok, r.error


VOID = """#include <stdio.h>
__global__ void announce(void) {
    printf("block %d thread %d\\n", blockIdx.x, threadIdx.x);
}
int main(void) {
    announce<<<3, 32>>>();
    return 0;
}
"""


def test_a_void_parameter_list_has_no_parameter(tmp_path: Path) -> None:
    unit = parse_bytes(VOID.encode(), "k.cu")
    assert unit.function("announce").params == ()
    d, spec, full = drafted(VOID)
    assert d.host_launch and len(spec.args) == 0
    assert list(spec.grid) == ["3"] and list(spec.block) == ["32"]
    assert not any(g.startswith("args.*.role") for g in d.guessed)
    compiles(full, tmp_path, "announce")


REDUCE = """#define SIZE (1 << 16)
__global__ void fold_sum(int* g_in, int* g_out, unsigned int n) {
    unsigned int tid = threadIdx.x;
    unsigned int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int* slice = g_in + blockIdx.x * blockDim.x;
    if (idx >= n) return;
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) slice[tid] += slice[tid + stride];
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = slice[0];
}
int main() {
    int *a, *b;
    int block = 512;
    fold_sum<<<SIZE / block, block>>>(a, b, SIZE);
    return 0;
}
"""


def test_a_loop_counting_down_ranges_from_its_start_to_the_bound(tmp_path: Path) -> None:
    d, spec, full = drafted(REDUCE)
    assert d.host_launch and spec.sizes == {"SIZE": 1 << 16}
    got = shapes(spec)
    assert got["g_out"] == ["SIZE // 512"]
    roles = {a.name: a.role for a in spec.args}
    assert roles["g_in"] == "inout" and roles["g_out"] == "out"
    compiles(full, tmp_path, "fold_sum")
    # a loop that counts up past its ">" bound has no range: the index is left as TODO
    wrong = REDUCE.replace("stride >>= 1", "stride += 1")
    d = draft_spec(parse_bytes(wrong.encode(), "k.cu"))
    assert any("uses stride" in t for t in d.todo), d.todo


TRANSPOSE = """#define TILE 8
__global__ void flip(float* in, float* out, int nx, int ny) {
    __shared__ float tile[TILE][TILE];
    unsigned int ix, iy, src, dst, lin, row, col;
    ix = threadIdx.x + blockDim.x * blockIdx.x;
    iy = threadIdx.y + blockDim.y * blockIdx.y;
    src = iy * nx + ix;
    lin = threadIdx.y * blockDim.x + threadIdx.x;
    row = lin / blockDim.y;
    col = lin % blockDim.y;
    ix = blockIdx.y * blockDim.y + col;
    iy = blockIdx.x * blockDim.x + row;
    dst = iy * ny + ix;
    if (ix < ny && iy < nx) {
        tile[threadIdx.y][threadIdx.x] = in[src];
        __syncthreads();
        out[dst] = tile[col][row];
    }
}
__global__ void norm_rows(float* o, const float* x, int size, int per_thread) {
    float ss = 0.0f;
    for (int i = 0; i < per_thread; i++) {
        int at = threadIdx.x + i * 256;
        if (at < size) ss += x[at] * x[at];
    }
    for (int i = 0; i < per_thread; i++) {
        int at = threadIdx.x + i * 256;
        if (at < size) o[at] = x[at] * ss;
    }
}
int main() {
    float *a, *b;
    int nx = 1 << 10, ny = 1 << 9;
    dim3 block(TILE, TILE);
    dim3 grid((nx + TILE - 1) / TILE, (ny + TILE - 1) / TILE);
    flip<<<grid, block>>>(a, b, nx, ny);
    norm_rows<<<1, 256>>>(b, a, 4096, 16);
    return 0;
}
"""


def test_locals_assigned_later_and_again_read_where_they_are_used(tmp_path: Path) -> None:
    d, spec, full = drafted(TRANSPOSE, "flip")
    assert d.host_launch and spec.sizes == {"nx": 1024, "ny": 512}
    # each index read with the values its locals have there: both reach nx * ny exactly
    for name, shape in shapes(spec).items():
        assert len(shape) == 1 and evaluate_or_none(shape[0], spec.sizes) == 1024 * 512, \
            (name, shape)
    compiles(full, tmp_path, "flip")


def test_one_name_declared_in_two_loops_is_two_locals(tmp_path: Path) -> None:
    _d, spec, full = drafted(TRANSPOSE, "norm_rows")
    got = shapes(spec)
    assert got["x"] == got["o"], got
    compiles(full, tmp_path, "norm_rows")


@pytest.mark.parametrize("change, unknown", [
    # a write under a condition does not always run before the read
    ("    src = iy * nx + ix;\n", "    if (nx > 4) src = iy * nx + ix;\n"),
    # a write after the read inside the loop reaches the read on the loop's next trip
    ("        if (at < size) ss += x[at] * x[at];\n",
     "        if (at < size) ss += x[at] * x[at];\n        at = at + 1;\n"),
])
def test_a_value_that_may_differ_at_the_read_stays_todo(change: str, unknown: str) -> None:
    src = TRANSPOSE.replace(change, unknown)
    assert src != TRANSPOSE
    kernel = "flip" if "src" in change else "norm_rows"
    d = draft_spec(parse_bytes(src.encode(), "k.cu"), kernel)
    assert d.todo, d.text


LANES = """#define SEGMENTS 4
#define WIDTH (8 * SEGMENTS)
__global__ void spread(int* in, int* out, const int mask) {
    int base = threadIdx.x * SEGMENTS;
    int v[SEGMENTS];
    for (int i = 0; i < SEGMENTS; i++) v[i] = in[base + i];
    for (int i = 0; i < SEGMENTS; i++) out[base + i] = v[i] ^ mask;
}
__global__ void dot(float* a, float* b, float* c, int n) {
    const int step = gridDim.x * blockDim.x;
    float acc = 0.0f;
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    while (gid < n) {
        acc += a[gid] * b[gid];
        gid += step;
    }
    atomicAdd(c, acc);
}
int main() {
    int *p, *q;
    float *a, *b, *c;
    spread<<<1, WIDTH>>>(p, q, 3);
    dot<<<16, 256>>>(a, b, c, 1 << 20);
    return 0;
}
"""


def test_defined_constants_in_indices_are_their_values(tmp_path: Path) -> None:
    _d, spec, full = drafted(LANES, "spread")
    assert [evaluate_or_none(b, {}) for b in spec.block] == [32]
    got = {n: [evaluate_or_none(e, spec.sizes) for e in s] for n, s in shapes(spec).items()}
    assert got == {"in": [128], "out": [128]}  # 32 threads x SEGMENTS
    compiles(full, tmp_path, "spread")


def test_grid_stride_while_and_an_atomic_address(tmp_path: Path) -> None:
    d, spec, full = drafted(LANES, "dot")
    got = shapes(spec)
    assert got["c"] == ["1"] and got["a"] == got["b"] and len(got["a"]) == 1, got
    assert {a.name: a.role for a in spec.args}["c"] == "inout"
    compiles(full, tmp_path, "dot")
    # a grid-stride variable that something else also writes has no range
    src = LANES.replace("        gid += step;\n", "        gid += step;\n        gid -= 1;\n")
    d = draft_spec(parse_bytes(src.encode(), "k.cu"), "dot")
    assert any("uses gid" in t for t in d.todo), d.todo


UNGUARDED = """__global__ void parity(float* c) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float a = 0.0f, b = 0.0f;
    if (tid % 2 == 0) a = 100.0f; else b = 200.0f;
    c[tid] = a + b;
}
int main() {
    int size = 64;
    int blocksize = 64;
    float* c;
    dim3 block(blocksize, 1);
    dim3 grid((size - 1) / block.x + 1, 1);
    parity<<<grid, block>>>(c);
    return 0;
}
"""


def test_a_shape_fits_the_drafted_sizes_not_only_the_samples(tmp_path: Path) -> None:
    """Near size 64 every sample launches two blocks (128 threads), but the drafted size
    launches one: the shape is the launch's thread count, which is 64 there."""
    _d, spec, full = drafted(UNGUARDED)
    shape, = shapes(spec)["c"]
    for size in (64, 65, 100, 4096):
        blocks = (size - 1) // 64 + 1
        assert evaluate_or_none(shape, {"size": size}) == blocks * 64, (shape, size)
    compiles(full, tmp_path, "parity")


PAIRS = """__global__ void pairs(const int* in, int* out, int n) {
    unsigned int idx = blockIdx.x * blockDim.x * 2 + threadIdx.x;
    if (idx + blockDim.x < n)
        out[blockIdx.x * blockDim.x + threadIdx.x] = in[idx] + in[idx + blockDim.x];
}
int main() {
    int size = 1 << 20;
    int *a, *b;
    dim3 block(256, 1);
    dim3 grid((size - 1) / block.x + 1, 1);
    pairs<<<grid.x / 2, block>>>(a, b, size);
    return 0;
}
"""


def test_a_dim3_axis_is_one_operand_of_the_launch_expression(tmp_path: Path) -> None:
    _d, spec, full = drafted(PAIRS)
    grid, = spec.grid
    for size in (1 << 20, 1000, 70000):
        assert evaluate_or_none(grid, {"size": size}) == ((size - 1) // 256 + 1) // 2, grid
    assert evaluate_or_none(shapes(spec)["out"][0], spec.sizes) == (1 << 20) // 2
    compiles(full, tmp_path, "pairs")


HALO = """#define R 4
#define B 32
__global__ void diff1d(const float* in, float* out) {
    __shared__ float s[B + 2 * R];
    int g = threadIdx.x + blockDim.x * blockIdx.x;
    int l = threadIdx.x + R;
    s[l] = in[g];
    if (threadIdx.x < R) {
        if (g > R) s[l - R] = in[g - R];
        if (g < gridDim.x * blockDim.x - B) s[l + B] = in[g + B];
    }
    __syncthreads();
    if (g < R || g >= gridDim.x * blockDim.x - R) return;
    out[g] = s[l + 1] - s[l - 1];
}
int main() {
    float *a, *b;
    unsigned int n = 1 << 16;
    dim3 block(B);
    dim3 grid((n - 1) / block.x + 1);
    diff1d<<<grid, block>>>(a, b);
    return 0;
}
"""


def test_a_guard_of_one_access_does_not_bound_another() -> None:
    """``g < G*B - 32`` guards the halo's load only; ``out[g]`` runs up to ``G*B - 5``: with
    two bounds on ``g`` neither is taken for every access, so ``out`` spans the launch rather
    than stopping 32 short of it (where the kernel would write past its end)."""
    _d, spec, _full = drafted(HALO)
    n = spec.sizes["n"]
    threads = ((n - 1) // 32 + 1) * 32
    got = {k: evaluate_or_none(v[0], spec.sizes) for k, v in shapes(spec).items()}
    assert got["out"] is not None and got["out"] >= threads - 4, got  # (4: R)
    assert got["in"] is not None and got["in"] >= threads, got
