/* klc-spec
kernel: log_softmax_rows
sizes: {rows: 8192, cols: 1024}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
args:
  - {name: in, shape: [rows, cols], role: in, init: "normal(0, 3)"}
  - {name: out, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 8 * rows * cols
flops: 4 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 180
*/
// A naive log-softmax, one thread per row, that indexes the matrix itself (no row pointer)
// and subtracts the log of the sum in place.
__global__ void log_softmax_rows(const float* in, float* out, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows) {
        float mx = -INFINITY;
        for (int j = 0; j < cols; j++) {
            mx = fmaxf(mx, in[i * cols + j]);
        }
        float sum = 0.0f;
        for (int j = 0; j < cols; j++) {
            out[i * cols + j] = in[i * cols + j] - mx;
            sum += expf(out[i * cols + j]);
        }
        float lse = logf(sum);
        for (int j = 0; j < cols; j++) {
            out[i * cols + j] -= lse;
        }
    }
}
