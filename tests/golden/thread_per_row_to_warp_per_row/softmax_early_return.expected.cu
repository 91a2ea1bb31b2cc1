/* klc-spec
kernel: softmax_early_return
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
grid: ["(ceil_div(rows, 256)) * 32"]
block: [256]
bytes: 8 * rows * cols
flops: 4 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 180
*/
// A naive softmax, one thread per row, that leaves early past the last row and indexes the
// output through the matrix itself rather than a row pointer.
__global__ void softmax_early_return(const float* in, float* out, int rows, int cols) {
    const int i = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (i < rows) {
        float mx = -INFINITY;
        for (int j = lane; j < cols; j += 32) {
            mx = fmaxf(mx, in[i * cols + j]);
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, offset));
        }
        float sum = 0.0f;
        for (int j = lane; j < cols; j += 32) {
            out[i * cols + j] = expf(in[i * cols + j] - mx);
            sum += out[i * cols + j];
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        }
        for (int j = lane; j < cols; j += 32) {
            out[i * cols + j] /= sum;
        }
    }
}
