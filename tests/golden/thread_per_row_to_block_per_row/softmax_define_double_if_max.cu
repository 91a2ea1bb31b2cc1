/* klc-spec
kernel: softmax_wide
sizes: {rows: 1024, COLS: 8192}
verify_sizes:
  - {rows: 37, COLS: 8192}
  - {rows: 1, COLS: 8192}
args:
  - {name: x, shape: [rows, COLS], role: in, init: "normal(0, 3)"}
  - {name: y, shape: [rows, COLS], role: out}
  - {name: rows, value: rows}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 8 * rows * COLS
flops: 4 * rows * COLS
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 120
*/
// Softmax over rows of a #define'd width, the maximum spelled with an if, the sum of the
// exponentials kept in double, the output written in a last sweep.
#define COLS 8192
__global__ void softmax_wide(const float *x, float *y, int rows) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float *xr = x + (long)r * COLS;
        float m = -INFINITY;
        for (int c = 0; c < COLS; c++) {
            if (xr[c] > m) m = xr[c];
        }
        double sum = 0.0;
        for (int c = 0; c < COLS; c++) {
            sum += exp((double)(xr[c] - m));
        }
        for (int c = 0; c < COLS; c++) {
            y[(long)r * COLS + c] = (float)(exp((double)(xr[c] - m)) / sum);
        }
    }
}
