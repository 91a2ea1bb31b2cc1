/* klc-spec
kernel: cumsum_rows
sizes: {rows: 16384, cols: 2048}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 301, cols: 999}
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
// family: scan
// style: thread per row, sequential running sum in double, row pointers, T *x spacing
// Inclusive prefix sum along each row: y[r, c] = x[r, 0] + ... + x[r, c] (torch.cumsum on
// the last dimension). The running sum is kept in double.
// bytes: x read, y written. flops: one add per element.
__global__ void cumsum_rows(const float *x, float *y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float *xr = x + (size_t)r * cols;
        float *yr = y + (size_t)r * cols;
        double running = 0.0;
        for (int c = 0; c < cols; c++) {
            running += xr[c];
            yr[c] = (float)running;
        }
    }
}
