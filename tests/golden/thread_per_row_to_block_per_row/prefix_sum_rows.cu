/* klc-spec
kernel: prefix_sum_rows
sizes: {rows: 1024, cols: 8192}
verify_sizes:
  - {rows: 37, cols: 99}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 8 * rows * cols
flops: rows * cols
timeout_s: 60
*/
// A near miss: a prefix sum along each row, then the output scaled in place. The warp
// rewrite scans that sweep, the block rewrite has no scan and would run it whole on every
// thread, racing with the in-place update: refused.
__global__ void prefix_sum_rows(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* xr = x + (size_t)r * cols;
        float* yr = y + (size_t)r * cols;
        float run = 0.0f;
        for (int c = 0; c < cols; c++) {
            run += xr[c];
            yr[c] = run;
        }
        for (int c = 0; c < cols; c++) {
            yr[c] *= 0.5f;
        }
    }
}
