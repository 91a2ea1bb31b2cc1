/* klc-spec
kernel: ema_rows
sizes: {rows: 16384, cols: 2048}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 3, cols: 1}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 8 * rows * cols
flops: 3 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 120
*/
// A near miss: an exponential moving average along each row is a running value but not a
// sum (acc = 0.9 acc + 0.1 x), so no scan of sums gives it; the store is refused.
__global__ void ema_rows(const float *x, float *y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float *xr = x + (size_t)r * cols;
        float *yr = y + (size_t)r * cols;
        float acc = 0.0f;
        for (int c = 0; c < cols; c++) {
            acc = 0.9f * acc + 0.1f * xr[c];
            yr[c] = acc;
        }
    }
}
