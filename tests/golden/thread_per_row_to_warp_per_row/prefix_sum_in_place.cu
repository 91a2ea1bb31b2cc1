/* klc-spec
kernel: cumsum_rows_inplace
sizes: {rows: 8192, cols: 1024}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
args:
  - {name: in, shape: [rows, cols], role: in, init: "normal(0, 3)"}
  - {name: out, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 8 * rows * cols
flops: 4 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 180
*/
// An inclusive prefix sum of each row, one thread per row, done in place on a copy of the
// row: each element adds the one before it, which another lane would own once the loop is
// strided by lane.
__global__ void cumsum_rows_inplace(const float* in, float* out, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float* y = out + (size_t)row * cols;
        for (int c = 0; c < cols; c++) {
            y[c] = in[(size_t)row * cols + c];
        }
        for (int c = 1; c < cols; c++) {
            y[c] += y[c - 1];
        }
    }
}
