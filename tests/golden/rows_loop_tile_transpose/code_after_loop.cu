/* klc-spec
kernel: transpose_flag
sizes: {n: 8192}
args:
  - {name: odata, shape: [n, n], role: out}
  - {name: idata, shape: [n, n], role: in, init: normal}
  - {name: last, shape: [n], role: out}
grid: ["n / 32", "n / 32"]
block: [32, 8]
bytes: 8 * n * n
flops: 0
*/
// Near miss: code after the loop reads x and y, which the tiled write phase assigns again.
#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transpose_flag(float *odata, const float *idata, float *last)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    int width = gridDim.x * TILE_DIM;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[x * width + (y + j)] = idata[(y + j) * width + x];
    if (y == 0) last[x] = idata[x];
}
