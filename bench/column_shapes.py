"""Which block shape should a column-reduction expert use?  Prints figures, asserts nothing.

The column lineages' first experts (32 x 8 blocks) were slower than their own naive versions
on an H100 for column_sum (0.69x): with cols/32 blocks of eight warps, too few loads are in
flight to cover DRAM latency.  This probe times, in one process, a thread-per-column sum
against the block-column sum (the lineage's expert code, unchanged) at several blockDim.y
values and a few matrix shapes, so that the expert's shape is chosen from a measurement.

    python3 bench/column_shapes.py            # needs a GPU and CuPy

CUDA events, 5 warm-up launches, the median of 30; inputs are normal random and larger than
L2 (the smallest matrix is 64 MiB).
"""

from __future__ import annotations

import statistics

import cupy as cp

NAIVE = r"""
extern "C" __global__ void naive(const float* x, float* out, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        float sum = 0.0f;
        for (int r = 0; r < rows; r++) sum += x[(size_t)r * cols + c];
        out[c] = sum;
    }
}
"""

BLOCK = r"""
extern "C" __global__ void block(const float* x, float* out, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    __shared__ float part[1024];
    if (c < cols) {
        for (int r = threadIdx.y; r < rows; r += blockDim.y) sum += x[(size_t)r * cols + c];
    }
    part[threadIdx.y * blockDim.x + threadIdx.x] = sum;
    __syncthreads();
    if (c < cols && threadIdx.y == 0) {
        for (int k = 1; k < blockDim.y; k++) sum += part[k * blockDim.x + threadIdx.x];
        out[c] = sum;
    }
}
"""

SHAPES = [(32768, 2048), (65536, 1024), (16384, 2048), (32768, 768), (8192, 8192)]


def _time(kernel, grid, block, args) -> float:
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(5):
        kernel(grid, block, args)
    times = []
    for _ in range(30):
        start.record()
        kernel(grid, block, args)
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1000.0)
    return statistics.median(times)


def main() -> None:
    naive = cp.RawKernel(NAIVE, "naive")
    block = cp.RawKernel(BLOCK, "block")
    name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"device: {name}")
    print("rows x cols | naive (block 256) | " + " | ".join(f"32 x {ty}" for ty in (8, 16, 32)))
    for rows, cols in SHAPES:
        x = cp.random.standard_normal((rows, cols), dtype=cp.float32)
        ref = x.sum(axis=0, dtype=cp.float64)
        out = cp.zeros(cols, dtype=cp.float32)
        args = (x, out, cp.int32(rows), cp.int32(cols))
        base = _time(naive, ((cols + 255) // 256,), (256,), args)
        cells = [f"{base:8.1f} us"]
        for ty in (8, 16, 32):
            t = _time(block, ((cols + 31) // 32,), (32, ty), args)
            err = float(cp.max(cp.abs(out - ref)))
            cells.append(f"{t:8.1f} us ({base / t:4.2f}x, err {err:.1e})")
        print(f"{rows} x {cols} | " + " | ".join(cells))
        del x, ref, out


if __name__ == "__main__":
    main()
