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
grid: ["(ceil_div(rows, 256)) * 32"]
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
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    const size_t stride = cols;
    const float eps = 1e-6f;
    if (row < rows) {
        float sumsq = 0.0f;
        for (int c = lane; c < cols; c += 32) {
            sumsq += inp[row * stride + c] * inp[row * stride + c];
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            sumsq += __shfl_xor_sync(0xffffffffu, sumsq, offset);
        }
        const float rs = rsqrtf(sumsq / cols + eps);
        for (int c = lane; c < cols; c += 32) {
            out[row * stride + c] = inp[row * stride + c] * rs * weight[c];
        }
    }
}
