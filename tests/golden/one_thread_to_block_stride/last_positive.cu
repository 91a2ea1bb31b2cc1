/* klc-spec
kernel: last_positive
sizes: {rows: 4096, cols: 1024}
args:
  - {name: out, shape: [rows], role: out}
  - {name: x, shape: [rows, cols], role: in}
  - {name: cols, value: cols}
grid: [rows]
block: [1]
bytes: 4 * rows * cols + 4 * rows
*/
// The last positive value of each row: every column may store to the row's one slot, and
// the last column that does wins; threads of a block would race for it.
__global__ void last_positive(float* out, const float* x, int cols) {
    const int row = blockIdx.x;
    out[row] = 0.0f;
    for (int c = 0; c < cols; c++) {
        if (x[row * cols + c] > 0.0f) {
            out[row] = x[row * cols + c];
        }
    }
}
