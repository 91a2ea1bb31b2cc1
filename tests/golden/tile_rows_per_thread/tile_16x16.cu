/* klc-spec
kernel: transpose_tile16
sizes: {rows: 4096, cols: 2048}
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
// A transpose staged through a padded 16 x 16 tile, one element per thread of a 16 x 16
// block (the shape tile_transpose and pad_smem_tile give a first transpose on that block):
// the tile edge is 16 here, so ?t = 16 and each thread copies ?factor rows of 16 / ?factor.
__global__ void transpose_tile16(float *out, const float *in, int rows, int cols) {
    __shared__ float tile[16][16 + 1];
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        tile[threadIdx.y][threadIdx.x] = in[r * cols + c];
    }
    __syncthreads();
    {
        int c = blockIdx.x * blockDim.x + threadIdx.y;
        int r = blockIdx.y * blockDim.y + threadIdx.x;
        if (r < rows && c < cols) {
            out[c * rows + r] = tile[threadIdx.x][threadIdx.y];
        }
    }
}
