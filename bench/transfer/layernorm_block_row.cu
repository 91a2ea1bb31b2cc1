/* klc-spec
kernel: layernorm_block
template: {BLOCK: 128}
sizes: {rows: 16384, cols: 4096}
verify_sizes:
  - {rows: 64, cols: 4096}
  - {rows: 33, cols: 1001}
  - {rows: 3, cols: 7}
args:
  - {name: x, shape: [rows, cols], role: in, init: "normal(1, 2)"}
  - {name: gamma, shape: [cols], role: in, init: "uniform(0.5, 1.5)"}
  - {name: beta, shape: [cols], role: in, init: "normal(0, 0.5)"}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
  - {name: eps, value: 0.00001}
grid: [rows]
block: [BLOCK]
bytes: 8 * rows * cols + 8 * cols
flops: 7 * rows * cols
tolerance: {rtol: 0.0002, atol: 0.00001}
*/
// family: row-reduction
// style: block per row, template block size, shared-memory tree, two-pass statistics, rsqrtf, const int locals
// Layer norm, one block of BLOCK threads per row: a block sum for the mean, a block sum of
// squared deviations for the variance, then y = (x - mean) * rstd * gamma + beta.
// bytes: x read, y written (8 rows cols), gamma and beta (8 cols). flops: 7 per element.
template <int BLOCK>
__global__ void layernorm_block(const float* x, const float* gamma, const float* beta, float* y,
                                int rows, int cols, float eps) {
    __shared__ float buf[BLOCK];
    const int row = blockIdx.x;
    const int tid = threadIdx.x;
    const float* xr = x + (size_t)row * cols;

    float s = 0.0f;
    for (int c = tid; c < cols; c += BLOCK) s += xr[c];
    buf[tid] = s;
    __syncthreads();
    for (int k = BLOCK / 2; k > 0; k /= 2) {
        if (tid < k) buf[tid] += buf[tid + k];
        __syncthreads();
    }
    const float mean = buf[0] / cols;
    __syncthreads();

    float q = 0.0f;
    for (int c = tid; c < cols; c += BLOCK) {
        float d = xr[c] - mean;
        q += d * d;
    }
    buf[tid] = q;
    __syncthreads();
    for (int k = BLOCK / 2; k > 0; k /= 2) {
        if (tid < k) buf[tid] += buf[tid + k];
        __syncthreads();
    }
    const float rstd = rsqrtf(buf[0] / cols + eps);

    float* yr = y + (size_t)row * cols;
    for (int c = tid; c < cols; c += BLOCK) {
        yr[c] = (xr[c] - mean) * rstd * gamma[c] + beta[c];
    }
}
