/* klc-spec
kernel: gemv_t
sizes: {rows: 16384, cols: 4096}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 301, cols: 999}
  - {rows: 3, cols: 5}
args:
  - {name: rows, value: rows}
  - {name: cols, value: cols}
  - {name: alpha, value: 1.5}
  - {name: A, shape: [rows, cols], role: in, init: normal}
  - {name: x, shape: [rows], role: in, init: normal}
  - {name: beta, value: 0.5}
  - {name: y, shape: [cols], role: inout, init: normal}
grid: ["ceil_div(cols, 128)"]
block: [128]
bytes: 4 * rows * cols + 4 * rows + 8 * cols
flops: 2 * rows * cols + 3 * cols
tolerance: {rtol: 0.0002, atol: 0.00001}
timeout_s: 120
*/
// family: gemm
// style: BLAS-like argument order (sizes, alpha, A, x, beta, y), thread per column (loads coalesce across threads), y updated in place, no const qualifiers
// y = alpha * A^T x + beta * y for a row-major rows x cols matrix A.
// bytes: A and x read once, y read and written. flops: 2 rows cols plus the axpby.
__global__ void gemv_t(int rows, int cols, float alpha, float* A, float* x, float beta,
                       float* y) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < cols) {
        float sum = 0.0f;
        for (int i = 0; i < rows; ++i)
            sum += A[i * cols + j] * x[i];
        y[j] = alpha * sum + beta * y[j];
    }
}
