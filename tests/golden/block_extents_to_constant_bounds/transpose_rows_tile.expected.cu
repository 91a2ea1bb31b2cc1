/* klc-spec
kernel: transpose_rows_tile
template: {TILE: 32, ROWS: 8}
sizes: {rows: 8192, cols: 8192}
verify_sizes:
  - {rows: 256, cols: 512}
  - {rows: 1000, cols: 333}
  - {rows: 31, cols: 67}
  - {rows: 3, cols: 5}
args:
  - {name: out, shape: [cols, rows], role: out}
  - {name: in, shape: [rows, cols], role: in, init: normal}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, TILE)", "ceil_div(rows, TILE)"]
block: [TILE, ROWS]
bytes: 8 * rows * cols
flops: 0
*/
// The rows-tile spelling of the tiled transpose (bench/lineages/transpose_rows_tile, the
// expert at 61% of SOL on an H200): the row computed once before the read loop and offset
// by j, the tile's edge and the step read from the block, a template's TILE x ROWS block
// in the spec. Its loops take the spec's 32 and 8.
template <int TILE, int ROWS>
__global__ void transpose_rows_tile(float* out, const float* in, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.x + threadIdx.y;
    for (int j = 0; j < 32; j += 8) {
        if (r + j < rows && c < cols) {
            tile[threadIdx.y + j][threadIdx.x] = in[(r + j) * cols + c];
        }
    }
    __syncthreads();
    for (int j = 0; j < 32; j += 8) {
        int c = blockIdx.x * blockDim.x + threadIdx.y + j;
        int r = blockIdx.y * blockDim.x + threadIdx.x;
        if (r < rows && c < cols) {
            out[c * rows + r] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
