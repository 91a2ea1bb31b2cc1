/* klc-spec
kernel: transpose_naive
sizes: {rows: 8192, cols: 8192}
verify_sizes:
  - {rows: 256, cols: 512}
  - {rows: 131, cols: 1001}
  - {rows: 3, cols: 5}
args:
  - {name: out, shape: [cols, rows], role: out}
  - {name: in, shape: [rows, cols], role: in, init: normal}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 16)", "ceil_div(rows, 16)"]
block: [16, 16]
bytes: 8 * rows * cols
flops: 0
*/
// family: transpose
// style: 2D grid of 16 x 16 blocks, coalesced reads and strided writes, #define tile edge in the host code, host main() with a dim3 launch
// out[c, r] = in[r, c] for a row-major rows x cols matrix.
// bytes: in read, out written (8 rows cols). flops: none.
#include <cstdio>
#include <cuda_runtime.h>

#define TILE 16

__global__ void transpose_naive(float* out, const float* in, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        out[c * rows + r] = in[r * cols + c];
    }
}

int main() {
    int rows = 4096, cols = 2048;
    size_t bytes = (size_t)rows * cols * sizeof(float);
    float *d_in, *d_out;
    cudaMalloc(&d_in, bytes);
    cudaMalloc(&d_out, bytes);
    dim3 block(TILE, TILE);
    dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start);
    transpose_naive<<<grid, block>>>(d_out, d_in, rows, cols);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    printf("transpose %d x %d: %.3f ms, %.1f GB/s\n", rows, cols, ms, 2.0 * bytes / ms / 1e6);
    cudaFree(d_in);
    cudaFree(d_out);
    return 0;
}
