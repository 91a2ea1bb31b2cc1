/* klc-spec
kernel: max_then_store
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
flops: 3 * rows * cols
timeout_s: 60
*/
// The maximum followed by a store in the same sweep (statements that do not read it), the
// output updated in place afterwards by the thread that stored each element.
__global__ void max_then_store(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* xr = x + (size_t)r * cols;
        float* yr = y + (size_t)r * cols;
        float m = -INFINITY;
        for (int c = 0; c < cols; c++) {
            const float v = xr[c] * 0.5f;
            m = fmaxf(m, v);
            yr[c] = v;
        }
        for (int c = 0; c < cols; c++) {
            yr[c] -= m;
        }
    }
}
