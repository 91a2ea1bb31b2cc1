/* klc-spec
kernel: transpose_naive
sizes: {n: 8192}
args:
  - {name: odata, shape: [n, n], role: out}
  - {name: idata, shape: [n, n], role: in, init: normal}
grid: ["n / 32", "n / 32"]
block: [16, 8]
bytes: 8 * n * n
flops: 0
*/
// Near miss: a 32-column tile walked by a block 16 threads wide (half of each tile's columns
// are nobody's); the tile would not be the block's.
#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transpose_naive(float *odata, const float *idata)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    int width = gridDim.x * TILE_DIM;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[x * width + (y + j)] = idata[(y + j) * width + x];
}
