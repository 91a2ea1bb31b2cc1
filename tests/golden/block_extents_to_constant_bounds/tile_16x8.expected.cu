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
block: [16, "ceil_div(16, 2)"]
bytes: 8 * rows * cols
flops: 0
*/
// A transpose staged through a padded 16 x 16 tile on a 16 x 8 block, two rows per thread
// (what tile_rows_per_thread gives a first transpose kept at 16 x 16): the block fixes the
// bounds at 16 and 8, not the 32 and 8 of the walk the skill was learned from.
__global__ void transpose_tile16(float *out, const float *in, int rows, int cols) {
    __shared__ float tile[16][16 + 1];
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < 16; j += 8) {
        int r = blockIdx.y * blockDim.x + threadIdx.y + j;
        if (r < rows && c < cols) {
            tile[threadIdx.y + j][threadIdx.x] = in[r * cols + c];
        }
    }
    __syncthreads();
    for (int j = 0; j < 16; j += 8) {
        int c = blockIdx.x * blockDim.x + threadIdx.y + j;
        int r = blockIdx.y * blockDim.x + threadIdx.x;
        if (r < rows && c < cols) {
            out[c * rows + r] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
