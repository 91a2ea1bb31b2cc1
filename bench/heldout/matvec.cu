/* klc-spec
kernel: matvec
sizes: {rows: 8192, cols: 8192}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
args:
  - {name: A, shape: [rows, cols], role: in, init: normal}
  - {name: x, shape: [cols], role: in, init: "uniform(-1, 1)"}
  - {name: y, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 4 * rows * cols + 4 * cols + 4 * rows
flops: 2 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.00001}
timeout_s: 180
*/
// y = A x for a row-major rows x cols matrix A; one thread per row computes the dot product
// of its row with x, left to right.
// bytes: A read once (4 * rows * cols), x read once (4 * cols), y written once (4 * rows).
// flops: a multiply and an add per element of A.
// The tolerance is relative to the size of the results, so a reordered dot product passes.
__global__ void matvec(const float* A, const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float sum = 0.0f;
        for (int c = 0; c < cols; c++) {
            sum += A[r * cols + c] * x[c];
        }
        y[r] = sum;
    }
}
