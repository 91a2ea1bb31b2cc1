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
grid: ["ceil_div(ceil_div(cols, 16), 2)", "ceil_div(ceil_div(rows, 16), 2)"]
block: ["(16) * 2", "ceil_div((16) * 2, 4)"]
bytes: 8 * rows * cols
flops: 0
*/
// bench/transfer/transpose_2d.cu after the tile steps of its recipe (grow_block_2d_cols_first,
// tile_transpose, tile_rows_per_thread): the spec's block and the host launch's dim3 of
// #define constants are both 32 x 8, so the loops over the tile's rows take the bounds 32
// and 8 (the site's own block, not a value pinned by the skill).
#include <cstdio>
#include <cuda_runtime.h>

#define TILE 16

__global__ void transpose_naive(float* out, const float* in, int rows, int cols) {
    __shared__ float tile[32][32];
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < 32; j += 8) {
        int r = blockIdx.y * blockDim.x + threadIdx.y + j;
        if (r < rows && c < cols) {
            tile[threadIdx.y + j][threadIdx.x] = in[r * cols + c];
        }
    }
    __syncthreads();
    for (int j = 0; j < 32; j += 8) {
        int c = blockIdx.x * blockDim.x + threadIdx.y + j;
        int r = blockIdx.y * blockDim.x + threadIdx.x;
        if (r < rows && c < cols) {
            out[c * rows + r] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}

int main() {
    int rows = 4096, cols = 2048;
    size_t bytes = (size_t)rows * cols * sizeof(float);
    float *d_in, *d_out;
    cudaMalloc(&d_in, bytes);
    cudaMalloc(&d_out, bytes);
    dim3 block(TILE * 2, TILE * 2 / 4);
    dim3 grid((cols + TILE * 2 - 1) / (TILE * 2), (rows + TILE * 2 - 1) / (TILE * 2));
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
