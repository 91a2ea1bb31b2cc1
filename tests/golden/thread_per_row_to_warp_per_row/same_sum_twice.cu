/* klc-spec
kernel: pair_sum
sizes: {rows: 4096, cols: 1024}
args:
  - {name: a, shape: [rows, cols], role: in, init: normal}
  - {name: b, shape: [rows, cols], role: in, init: normal}
  - {name: y, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 8 * rows * cols
flops: 2 * rows * cols
verify_sizes:
  - {rows: 37, cols: 99}
timeout_s: 60
*/
// A near miss: one variable summed twice in the sweep (two terms per column). The two-sum
// sub-rules would reduce it twice across the warp (the second shuffle loop adding the first's
// total again): refused.
__global__ void pair_sum(const float* a, const float* b, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; c++) {
            s += a[r * cols + c];
            s += b[r * cols + c];
        }
        y[r] = s;
    }
}
