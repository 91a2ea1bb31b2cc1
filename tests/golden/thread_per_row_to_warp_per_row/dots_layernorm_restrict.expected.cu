/* klc-spec
kernel: layernorm_restrict
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
// The layer norm with __restrict__ pointers and sizes cast once before the check.
__global__ void layernorm_restrict(const float* __restrict__ inp,
                                   const float* __restrict__ weight,
                                   const float* __restrict__ bias, float* __restrict__ out,
                                   int rows, int cols) {
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    const float n = (float)cols;
    const float eps = 1e-5f;
    if (row < rows) {
        const float* __restrict__ x = inp + (size_t)row * cols;
        float* __restrict__ y = out + (size_t)row * cols;
        float sum = 0.0f;
        for (int c = lane; c < cols; c += 32) {
            sum += x[c];
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        }
        const float mean = sum / n;
        float sq = 0.0f;
        for (int c = lane; c < cols; c += 32) {
            const float d = x[c] - mean;
            sq += d * d;
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            sq += __shfl_xor_sync(0xffffffffu, sq, offset);
        }
        const float rstd = 1.0f / sqrtf(sq / n + eps);
        for (int c = lane; c < cols; c += 32) {
            y[c] = (x[c] - mean) * rstd * weight[c] + bias[c];
        }
    }
}
