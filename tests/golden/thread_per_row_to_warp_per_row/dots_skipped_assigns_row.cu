/* klc-spec
kernel: rmsnorm_forward
sizes: {rows: 4096, cols: 1024}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
args:
  - {name: inp, shape: [rows, cols], role: in, init: normal}
  - {name: weight, shape: [cols], role: in, init: normal}
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
// No match at all: a statement between the row index and its check assigns the row (the
// default of the dots: what the anchor bound keeps its value across them).
__global__ void rmsnorm_forward(const float* inp, const float* weight, float* out, int rows,
                                int cols) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    float eps = 1e-6f;
    idx = idx < rows ? idx : rows;
    if (idx < rows) {
        const float* x = inp + (size_t)idx * cols;
        float* y = out + (size_t)idx * cols;
        float ss = 0.0f;
        for (int i = 0; i < cols; i++) {
            ss += x[i] * x[i];
        }
        float r = rsqrtf(ss / cols + eps);
        for (int i = 0; i < cols; i++) {
            y[i] = x[i] * r * weight[i];
        }
    }
}
