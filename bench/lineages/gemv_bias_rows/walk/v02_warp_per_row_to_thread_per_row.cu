/* klc-spec
kernel: gemv_bias_rows
sizes: {rows: 8192, cols: 4096}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
  - {rows: 3, cols: 1}
args:
  - {name: A, shape: [rows, cols], role: in, init: "normal(0, 0.05)"}
  - {name: x, shape: [cols], role: in, init: normal}
  - {name: b, shape: [rows], role: in, init: normal}
  - {name: y, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(ceil_div(rows * 32, 256), 32)"]
block: [256]
bytes: 4 * rows * cols + 4 * cols + 8 * rows
flops: 2 * rows * cols
tolerance: {rtol: 0.0005, atol: 0.00001}
timeout_s: 180
*/
// Matrix-vector product with a bias, y[r] = b[r] + A[r, 0] * x[0] + ... + A[r, cols-1] *
// x[cols-1] (a linear layer applied to one vector). The expert of the gemv_bias_rows lineage;
// each optimization is one separable code shape (README.md names the pass that removes it):
//   - __launch_bounds__(256);
//   - const __restrict__ inputs, a __restrict__ output (A used as a row pointer);
//   - one warp per row: the sum starts at the bias, so the lanes do not stride it directly
//     (each lane would count the bias once): in a block of its own, a zero partial sum of
//     the type of the accumulator strides the row 32 columns apart from the lane (coalesced
//     loads of A's row and of x), an xor-shuffle loop gives every lane the whole row's
//     partial sum, and it is added once to the accumulator, which is then the same on every
//     lane. Every lane stores y[r] (the same value).
// bytes: A read once, x read (from cache) per row, b read and y written once. flops: 2 per
// element of A.
__global__ void 
gemv_bias_rows(const float* __restrict__ A, const float* __restrict__ x,
               const float* __restrict__ b, float* __restrict__ y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* ar = A + (size_t)r * cols;
        float acc = b[r];
        for (int c = 0; c < cols; c++) {
            acc += ar[c] * x[c];
        }
        y[r] = acc;
    }
}
