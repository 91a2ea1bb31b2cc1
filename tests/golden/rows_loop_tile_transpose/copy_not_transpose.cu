/* klc-spec
kernel: copy_rows
sizes: {n: 8192}
args:
  - {name: odata, shape: [n, n], role: out}
  - {name: idata, shape: [n, n], role: in, init: normal}
grid: ["n / 32", "n / 32"]
block: [32, 8]
bytes: 8 * n * n
flops: 0
*/
// Near miss: the rows loop of a copy (each element stays in its place), not a transpose: no
// tile to stage, no match.
#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void copy_rows(float *odata, const float *idata)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    int width = gridDim.x * TILE_DIM;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(y + j) * width + x] = idata[(y + j) * width + x];
}
