/* klc-spec
kernel: transpose_rows_loop
sizes: {n: 8192}
verify_sizes:
  - {n: 64}
  - {n: 256}
args:
  - {name: dst, shape: [n, n], role: out}
  - {name: src, shape: [n, n], role: in, init: normal}
grid: ["n / 32", "n / 32"]
block: [32, 8]
bytes: 8 * n * n
flops: 0
*/
// The naive transpose of the blog posts: a 32 x 8 block, each thread a column of TILE_DIM /
// BLOCK_ROWS rows, the width from the grid, no bounds check (square matrices).
#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transpose_rows_loop(float* dst, const float* src) {
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    int width = gridDim.x * TILE_DIM;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        dst[x * width + (y + j)] = src[(y + j) * width + x];
    }
}
