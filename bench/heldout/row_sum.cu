/* klc-spec
kernel: row_sum
sizes: {rows: 8192, cols: 8192}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
args:
  - {name: x, shape: [rows, cols], role: in, init: "normal(0.5, 1)"}
  - {name: out, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 4 * rows * cols + 4 * rows
flops: rows * cols
tolerance: {rtol: 0.0001, atol: 0.00001}
timeout_s: 180
*/
// out[r] = sum over c of x[r, c] for a row-major rows x cols matrix; one thread per row,
// summing its row from left to right.
// bytes: x read once (4 * rows * cols), out written once (4 * rows).
// flops: one add per element of x.
// The tolerance is relative to the size of the sums, so a reordered sum (a tree over the
// row, as a faster version does) passes.
__global__ void row_sum(const float* x, float* out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float sum = 0.0f;
        for (int c = 0; c < cols; c++) {
            sum += x[r * cols + c];
        }
        out[r] = sum;
    }
}
