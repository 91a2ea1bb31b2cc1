/* klc-spec
kernel: rmsnorm_restrict
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
// The RMS norm with __restrict__ pointers, a size_t stride declared before the check, and
// the row indexed as inp[row * stride + c].
__global__ void rmsnorm_restrict(const float* __restrict__ inp,
                                 const float* __restrict__ weight, float* __restrict__ out,
                                 int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = cols;
    const float eps = 1e-6f;
    if (row < rows) {
        float sumsq = 0.0f;
        for (int c = 0; c < cols; c++) {
            sumsq += inp[row * stride + c] * inp[row * stride + c];
        }
        const float rs = rsqrtf(sumsq / cols + eps);
        for (int c = 0; c < cols; c++) {
            out[row * stride + c] = inp[row * stride + c] * rs * weight[c];
        }
    }
}
