/* klc-spec
kernel: transpose_naive
sizes: {n: 8192}
verify_sizes:
  - {n: 256}
  - {n: 64}
args:
  - {name: odata, shape: [n, n], role: out}
  - {name: idata, shape: [n, n], role: in, init: normal}
grid: ["n / 32", "n / 32"]
block: [32, 8]
bytes: 8 * n * n
flops: 0
*/
// A first transpose of a square matrix in the rows-loop spelling: a TILE_DIM x BLOCK_ROWS
// block, each thread storing TILE_DIM / BLOCK_ROWS elements of its column, the width taken
// from the grid, no bounds check.
#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transpose_naive(float *odata, const float *idata)
{
    __shared__ float tile[32][32];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    int width = gridDim.x * TILE_DIM;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];
}
