/* klc-spec
kernel: transpose_naive
sizes: {n: 8160}
args:
  - {name: odata, shape: [n, n], role: out}
  - {name: idata, shape: [n, n], role: in, init: normal}
grid: ["n / 32", "n / 32"]
block: [32, 12]
bytes: 8 * n * n
flops: 0
*/
// Near miss: 12 rows between a thread's elements do not divide the 32-row tile (the loop
// reaches rows 32 .. 35 of a 32 x 32 tile).
#define TILE_DIM 32
#define BLOCK_ROWS 12

__global__ void transpose_naive(float *odata, const float *idata)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    int width = gridDim.x * TILE_DIM;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[x * width + (y + j)] = idata[(y + j) * width + x];
}
