/* klc-spec
kernel: row_max_2d
sizes: {rows: 4096, cols: 4096}
verify_sizes:
  - {rows: 37, cols: 99}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: y, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 32)", 1]
block: [32, 4]
bytes: 4 * rows * cols
flops: rows * cols
timeout_s: 60
*/
// A near miss: a two-dimensional block (the y threads repeat the row). The block rewrite's
// warps are counted along x only: refused.
__global__ void row_max_2d(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float m = -INFINITY;
        for (int c = 0; c < cols; c++) {
            m = fmaxf(m, x[(size_t)r * cols + c]);
        }
        y[r] = m;
    }
}
