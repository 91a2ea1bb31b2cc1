/* klc-spec
kernel: col_sum
sizes: {rows: 8192, cols: 8192}
verify_sizes:
  - {rows: 1024, cols: 256}
  - {rows: 999, cols: 1001}
  - {rows: 5, cols: 37}
args:
  - {name: x, shape: [rows, cols], role: in, init: "normal(0.5, 1)"}
  - {name: out, shape: [cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 256)"]
block: [256]
bytes: 4 * rows * cols + 4 * cols
flops: rows * cols
tolerance: {rtol: 0.0001, atol: 0.00001}
timeout_s: 180
*/
// out[c] = sum over r of x[r, c] for a row-major rows x cols matrix; one thread per column,
// summing its column from top to bottom.
// bytes: x read once (4 * rows * cols), out written once (4 * cols).
// flops: one add per element of x.
// The tolerance is relative to the size of the sums, so a reordered sum passes.
__global__ void col_sum(const float* x, float* out, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        float sum = 0.0f;
        for (int r = 0; r < rows; r++) {
            sum += x[r * cols + c];
        }
        out[c] = sum;
    }
}
