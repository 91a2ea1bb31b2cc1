/* klc-spec
kernel: transpose_rows_loop
template: {ROWS: 8}
sizes: {rows: 8192, cols: 8192}
verify_sizes:
  - {rows: 256, cols: 512}
  - {rows: 131, cols: 1001}
  - {rows: 3, cols: 5}
args:
  - {name: out, shape: [cols, rows], role: out}
  - {name: in, shape: [rows, cols], role: in, init: normal}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 32)", "ceil_div(rows, 32)"]
block: [32, ROWS]
bytes: 8 * rows * cols
flops: 0
*/
// Near miss: the loop and the indices walk 16 rows and columns per block, but the block is
// 32 x 8 (its x extent is not the tile edge the code uses).
template <int ROWS>
__global__ void transpose_rows_loop(float* out, const float* in, int rows, int cols) {
    int x = blockIdx.x * 16 + threadIdx.x;
    int y = blockIdx.y * 16 + threadIdx.y;
    for (int j = 0; j < 16; j += ROWS) {
        if (x < cols && y + j < rows) {
            out[x * rows + (y + j)] = in[(y + j) * cols + x];
        }
    }
}
