/* klc-spec
kernel: transpose_tile_dim
sizes: {rows: 4096, cols: 2048}
verify_sizes:
  - {rows: 256, cols: 512}
  - {rows: 131, cols: 1001}
  - {rows: 3, cols: 5}
args:
  - {name: odata, shape: [cols, rows], role: out}
  - {name: idata, shape: [rows, cols], role: in, init: normal}
  - {name: height, value: rows}
  - {name: width, value: cols}
grid: ["ceil_div(cols, 32)", "ceil_div(rows, 32)"]
block: [32, 32]
bytes: 8 * rows * cols
flops: 0
*/
// The tutorial spelling: the tile edge as a #define in the indices (blockIdx.x * TILE_DIM +
// threadIdx.x, the block TILE_DIM x TILE_DIM), width and height, x and y.
#define TILE_DIM 32

__global__ void transpose_tile_dim(float *odata, const float *idata, int height, int width) {
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    if (x < width && y < height)
        odata[x * height + y] = idata[y * width + x];
}
