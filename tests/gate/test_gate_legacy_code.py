"""Kernel files written for older CUDA compile in the gate as nvcc compiled them there: a
file that includes CUB's umbrella header (which refuses NVRTC) and uses its block and warp
primitives, with the operators CCCL 3 removed (``cub::Max``); a file that calls the warp
intrinsics without a mask (``__shfl_xor``, ``__ballot``), which CUDA declares only below
compute capability 7.0; a file whose host code keeps state in namespace-scope variables.
Real NVRTC compiles, no GPU; the kernels are written here."""

from __future__ import annotations

from pathlib import Path

from klc.cuda.parse import parse_bytes
from klc.gate.compile import compile_unit, prepare_device_source

CUB_UMBRELLA = b"""#include <stdio.h>
#include <cub/cub.cuh>
__global__ void block_peak(const float* x, float* peak, float* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : -1e30f;
    using Reduce = cub::BlockReduce<float, 128>;
    __shared__ typename Reduce::TempStorage tmp;
    float m = Reduce(tmp).Reduce(v, cub::Max());
    __syncthreads();
    float s = Reduce(tmp).Reduce(i < n ? x[i] : 0.0f, cub::Sum());
    using Warp = cub::WarpReduce<float>;
    __shared__ typename Warp::TempStorage wtmp[4];
    float w = Warp(wtmp[threadIdx.x / 32]).Sum(v);
    if (threadIdx.x == 0) { peak[blockIdx.x] = m; total[blockIdx.x] = s + 0.0f * w; }
}
int main() {
    void* tmp = nullptr; size_t bytes = 0; float *x = nullptr, *y = nullptr;
    cub::DeviceReduce::Sum(tmp, bytes, x, y, 1024);
    printf("%zu\\n", bytes);
    return 0;
}
"""

LEGACY_WARP = b"""#define LANES 32
__global__ void lane_sums(const int* x, int* y, unsigned* votes, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    for (int m = LANES / 2; m > 0; m >>= 1)
        v += __shfl_xor(v, m, LANES);
    int first = __shfl(v, 0);
    int up = __shfl_up(v, 1) + __shfl_down(v, 1);
    unsigned b = __ballot(v > 0);
    if (__any(v < 0) || __all(v == first)) b |= 1u;
    if (i < n) { y[i] = v + 0 * up; votes[i] = b; }
}
"""


def _compile(src: bytes, tmp_path: Path, name: str,  # type: ignore[no-untyped-def]
             kernels: tuple[str, ...] = ()):
    path = tmp_path / name
    path.write_bytes(src)
    return compile_unit(parse_bytes(src, str(path)), arch="sm_90", name_expressions=kernels,
                        use_cache=False)


def test_cub_umbrella_header_compiles_as_its_device_headers(tmp_path: Path) -> None:
    r = _compile(CUB_UMBRELLA, tmp_path, "peak.cu")
    assert r.ok, r.error
    assert any("#include <cub/cub.cuh> at 2:1 (compiled as its device headers" in why
               for why in r.removed), r.removed
    prepared = prepare_device_source(parse_bytes(CUB_UMBRELLA, "peak.cu")).source
    # the same length and lines: NVRTC's line:column are the file's
    assert len(prepared) == len(CUB_UMBRELLA)
    assert prepared.splitlines()[1] == b"#include <klc_cub.cuh>"


def test_cub_umbrella_without_the_shim_is_refused_by_nvrtc(tmp_path: Path) -> None:
    """(what the shim answers: NVRTC's own #error on the umbrella header)"""
    from klc.gate.compile import compile_source

    r = compile_source(b"#include <cub/cub.cuh>\n__global__ void k(float* y) { y[0] = 1; }\n",
                       str(tmp_path / "raw.cu"), arch="sm_90", use_cache=False)
    assert not r.ok and "#error" in (r.error or ""), r.error


def test_warp_intrinsics_without_a_mask_compile_for_sm90(tmp_path: Path) -> None:
    r = _compile(LEGACY_WARP, tmp_path, "lanes.cu", ("lane_sums",))
    assert r.ok, r.error
    # the same calls spelled out with their _sync forms compile to the same code
    spelled = (LEGACY_WARP.replace(b"__shfl_xor(v, m, LANES)",
                                   b"__shfl_xor_sync(0xffffffffu, v, m, LANES)")
               .replace(b"__shfl(v, 0)", b"__shfl_sync(0xffffffffu, v, 0)")
               .replace(b"__shfl_up(v, 1)", b"__shfl_up_sync(0xffffffffu, v, 1)")
               .replace(b"__shfl_down(v, 1)", b"__shfl_down_sync(0xffffffffu, v, 1)")
               .replace(b"__ballot(", b"__ballot_sync(0xffffffffu, ")
               .replace(b"__any(", b"__any_sync(0xffffffffu, ")
               .replace(b"__all(", b"__all_sync(0xffffffffu, "))
    r2 = _compile(spelled, tmp_path, "lanes_sync.cu", ("lane_sums",))
    assert r2.ok, r2.error
    assert r.resources["lane_sums"].registers == r2.resources["lane_sums"].registers
    assert r.resources["lane_sums"].registers


def test_a_file_without_legacy_calls_is_compiled_without_the_shim(tmp_path: Path) -> None:
    """A function of the file's own named like a legacy intrinsic's _sync form is left alone,
    and a file that calls none compiles as before (no pre-include, no conflict)."""
    src = (b"__device__ int all_lanes(int p) { return __all_sync(0xffffffffu, p); }\n"
           b"__global__ void k(const int* x, int* y) {\n"
           b"    y[threadIdx.x] = __shfl_sync(0xffffffffu, x[threadIdx.x], 0) +\n"
           b"                     all_lanes(x[threadIdx.x] > 0);\n}\n")
    r = _compile(src, tmp_path, "plain.cu")
    assert r.ok, r.error
    r2 = _compile(src.replace(b"__shfl_sync(0xffffffffu, ", b"__shfl("), tmp_path, "old.cu")
    assert r2.ok, r2.error
    assert r.key != r2.key  # the shim is part of what was compiled


HOST_STATE = b"""#include <cuda_fp16.h>
unsigned long long run_seed;
int calls = 0, *scratch;
static float host_scale = 2.0f;
const int LIMIT = 8;
__device__ int device_count;
__constant__ float coef[4];
struct Options { int steps; };
Options options;
void launch(half* y, int n);
namespace cfg { float learning_rate = 0.1f; }
__global__ void bump(half* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && i < LIMIT * 1024) y[i] = __hadd(y[i], __float2half(coef[0]));
    if (i == 0) atomicAdd(&device_count, 1);
}
void launch(half* y, int n) { calls++; bump<<<(n + 255) / 256, 256>>>(y, n); }
"""


def test_host_variables_are_blanked_and_device_ones_kept(tmp_path: Path) -> None:
    r = _compile(HOST_STATE, tmp_path, "state.cu", ("bump",))
    assert r.ok, r.error
    hosts = [w for w in r.removed if w.startswith("host ")]
    assert hosts == ["host function launch at 17:1", "host variable run_seed at 2:1",
                     "host variable calls, scratch at 3:1",
                     "host variable host_scale at 4:1", "host variable options at 9:1",
                     "host function declaration launch at 10:1",
                     "host variable learning_rate at 11:17"], r.removed
    prepared = prepare_device_source(parse_bytes(HOST_STATE, "state.cu")).source
    assert len(prepared) == len(HOST_STATE)
    for kept in (b"const int LIMIT = 8;", b"__device__ int device_count;",
                 b"__constant__ float coef[4];", b"struct Options { int steps; };",
                 b"__device__ int device_count;"):
        assert kept in prepared, kept
