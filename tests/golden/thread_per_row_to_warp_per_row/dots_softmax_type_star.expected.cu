/* klc-spec
kernel: softmax_forward
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
grid: ["(ceil_div(rows, 256)) * 32"]
block: [256]
bytes: 8 * rows * cols
flops: 4 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.00001}
timeout_s: 180
*/
// A naive row softmax, one thread per row, pointers written `float* p`: a declaration (the
// lowest float) stands between the row index and the bounds check.
__global__ void softmax_forward(const float* inp, float* out, int rows, int cols) {
    const int idx = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    const float lowest = -3.402823466e38f;
    if (idx < rows) {
        const float* x = inp + (size_t)idx * cols;
        float* y = out + (size_t)idx * cols;
        float maxval = lowest;
        for (int j = lane; j < cols; j += 32) {
            maxval = fmaxf(maxval, x[j]);
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            maxval = fmaxf(maxval, __shfl_xor_sync(0xffffffffu, maxval, offset));
        }
        float sum = 0.0f;
        for (int j = lane; j < cols; j += 32) {
            sum += expf(x[j] - maxval);
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        }
        for (int j = lane; j < cols; j += 32) {
            y[j] = expf(x[j] - maxval) / sum;
        }
    }
}
