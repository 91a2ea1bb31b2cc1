/* klc-spec
kernel: transpose_bounded
sizes: {width: 8192, height: 4096}
verify_sizes:
  - {width: 512, height: 256}
  - {width: 333, height: 1000}
  - {width: 67, height: 31}
args:
  - {name: odata, shape: [width, height], role: out}
  - {name: idata, shape: [height, width], role: in, init: normal}
  - {name: width, value: width}
  - {name: height, value: height}
grid: ["ceil_div(width, 32)", "ceil_div(height, 32)"]
block: [32, 8]
bytes: 8 * width * height
flops: 0
*/
// The rows-loop transpose of a height x width matrix, every element checked against its
// bounds (the column first, the rows loop's row parenthesized): the rows loop that this
// skill stages, in the spelling of x, y, width and height.
#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transpose_bounded(float *odata, const float *idata, int width, int height)
{
    __shared__ float tile[32][32];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (y + j < height && x < width) {
            tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
        }
    }
    __syncthreads();
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        int x = blockIdx.x * TILE_DIM + threadIdx.y + j;
        int y = blockIdx.y * TILE_DIM + threadIdx.x;
        if (y < height && x < width) {
            odata[x * height + y] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
