/* klc-spec
kernel: running_max
sizes: {rows: 16384, cols: 1024}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 3, cols: 2}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 8 * rows * cols
flops: rows * cols
timeout_s: 120
*/
// A near miss: a running maximum (torch.cummax's values) stores the maximum so far after
// taking it, so the statement after the maximum reads it: split across lanes, each lane
// would store the maximum of its own columns only.
__global__ void running_max(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* xr = x + (size_t)r * cols;
        float* yr = y + (size_t)r * cols;
        float m = -INFINITY;
        for (int c = 0; c < cols; c++) {
            m = fmaxf(m, xr[c]);
            yr[c] = m;
        }
    }
}
