/* klc-spec
kernel: exclusive_cumsum
sizes: {rows: 16384, cols: 2048}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 3, cols: 1}
args:
  - {name: x, shape: [rows, cols], role: in, init: "normal(0.1, 1)"}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 8 * rows * cols
flops: rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 120
*/
// A near miss: an exclusive prefix sum stores the running sum before adding the element, a
// shape the scan sub-rule (the sum first, then the statements that read it) does not take:
// the loop would stay whole on every lane, and its store is refused.
__global__ void exclusive_cumsum(const float *x, float *y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float *xr = x + (size_t)r * cols;
        float *yr = y + (size_t)r * cols;
        float acc = 0.0f;
        for (int c = 0; c < cols; c++) {
            yr[c] = acc;
            acc += xr[c];
        }
    }
}
