/* klc-spec
kernel: transpose_column_from_row
sizes: {rows: 4096, cols: 2048}
args:
  - {name: out, shape: [cols, rows], role: out}
  - {name: in, shape: [rows, cols], role: in, init: normal}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 32)", "ceil_div(rows, 32)"]
block: [32, 32]
bytes: 8 * rows * cols
flops: 0
*/
// Near miss of the declaration order: the column declared second reads the row (a shift
// by row * 0, which the compiler folds but the matcher does not), so the two declarations
// cannot trade places and the anchor, which declares the column first, does not match.
__global__ void transpose_column_from_row(float *out, const float *in, int rows, int cols) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x + row * 0;
    if (row < rows && col < cols) {
        out[col * rows + row] = in[row * cols + col];
    }
}
