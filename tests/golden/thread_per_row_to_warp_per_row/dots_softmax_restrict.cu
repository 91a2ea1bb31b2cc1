/* klc-spec
kernel: softmax_restrict
sizes: {rows: 4096, cols: 1024}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
args:
  - {name: inp, shape: [rows, cols], role: in, init: "normal(0, 3)"}
  - {name: out, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 8 * rows * cols
flops: 4 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.00001}
timeout_s: 180
*/
// The softmax with __restrict__ pointers and a reciprocal kept in a declaration before the
// check; the row is indexed as inp[row * cols + c] (no row pointer).
__global__ void softmax_restrict(const float* __restrict__ inp, float* __restrict__ out,
                                 int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    const float log2e = 1.4426950409f;
    const size_t stride = (size_t)cols;
    if (row < rows) {
        float mx = -INFINITY;
        for (int c = 0; c < cols; c++) {
            mx = fmaxf(mx, inp[row * stride + c]);
        }
        float total = 0.0f;
        for (int c = 0; c < cols; c++) {
            total += exp2f((inp[row * stride + c] - mx) * log2e);
        }
        for (int c = 0; c < cols; c++) {
            out[row * stride + c] = exp2f((inp[row * stride + c] - mx) * log2e) / total;
        }
    }
}
