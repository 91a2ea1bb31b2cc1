/* klc-spec
kernel: layernorm_forward
sizes: {rows: 4096, cols: 1024}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
args:
  - {name: inp, shape: [rows, cols], role: in, init: normal}
  - {name: weight, shape: [cols], role: in, init: normal}
  - {name: bias, shape: [cols], role: in, init: normal}
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
// A naive layer norm, one thread per row, `float* p` spelling, with eps declared between the
// row index and its check (the common first version of such a kernel).
__global__ void layernorm_forward(const float* inp, const float* weight, const float* bias,
                                  float* out, int rows, int cols) {
    const int idx = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    float eps = 1e-5f;
    if (idx < rows) {
        const float* x = inp + (size_t)idx * cols;
        float* y = out + (size_t)idx * cols;
        float m = 0.0f;
        for (int i = lane; i < cols; i += 32) {
            m += x[i];
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            m += __shfl_xor_sync(0xffffffffu, m, offset);
        }
        m = m / cols;
        float v = 0.0f;
        for (int i = lane; i < cols; i += 32) {
            float xshift = x[i] - m;
            v += xshift * xshift;
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            v += __shfl_xor_sync(0xffffffffu, v, offset);
        }
        v = v / cols;
        float s = 1.0f / sqrtf(v + eps);
        for (int i = lane; i < cols; i += 32) {
            y[i] = (s * (x[i] - m)) * weight[i] + bias[i];
        }
    }
}
