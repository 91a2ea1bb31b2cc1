/* klc-spec
kernel: cumsum_fixed
sizes: {rows: 16384}
verify_sizes:
  - {rows: 256}
  - {rows: 3}
args:
  - {name: x, shape: [rows, 500], role: in, init: "normal(0.1, 1)"}
  - {name: y, shape: [rows, 500], role: out}
  - {name: totals, shape: [rows], role: out}
  - {name: rows, value: rows}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 8 * rows * 500 + 4 * rows
flops: rows * 500
tolerance: {rtol: 0.0001, atol: 0.00001}
timeout_s: 120
*/
// Cumulative sum of rows of a #define'd length in float, the scaled running sum stored, and
// each row's total stored after the loop.
#define COLS 500

__global__ void cumsum_fixed(const float* x, float* y, float* totals, int rows) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* xr = x + r * COLS;
        float* yr = y + r * COLS;
        float acc = 0.0f;
        for (int c = 0; c < COLS; c++) {
            acc += xr[c];
            yr[c] = 0.5f * acc;
        }
        totals[r] = acc;
    }
}
