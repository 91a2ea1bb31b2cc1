/* klc-spec
kernel: gemv_rows
sizes: {rows: 16384, cols: 4096}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 301, cols: 999}
  - {rows: 3, cols: 5}
args:
  - {name: A, shape: [rows, cols], role: in, init: normal}
  - {name: x, shape: [cols], role: in, init: normal}
  - {name: y, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 4 * rows * cols + 4 * cols + 4 * rows
flops: 2 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 120
*/
// family: gemm
// style: GEMV, thread per row, double accumulator, long row offset, early return
// y = A x for a row-major rows x cols matrix A, accumulated in double per row.
// bytes: A read once, x read once, y written. flops: 2 rows cols.
__global__ void gemv_rows(const float* A, const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* a = A + (long)r * cols;
    double acc = 0.0;
    for (int c = 0; c < cols; c++) {
        acc += (double)a[c] * (double)x[c];
    }
    y[r] = (float)acc;
}
