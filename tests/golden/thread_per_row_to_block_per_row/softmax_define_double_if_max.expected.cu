/* klc-spec
kernel: softmax_wide
sizes: {rows: 1024, COLS: 8192}
verify_sizes:
  - {rows: 37, COLS: 8192}
  - {rows: 1, COLS: 8192}
args:
  - {name: x, shape: [rows, COLS], role: in, init: "normal(0, 3)"}
  - {name: y, shape: [rows, COLS], role: out}
  - {name: rows, value: rows}
grid: [rows]
block: [256]
bytes: 8 * rows * COLS
flops: 4 * rows * COLS
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 120
*/
// Softmax over rows of a #define'd width, the maximum spelled with an if, the sum of the
// exponentials kept in double, the output written in a last sweep.
#define COLS 8192
__global__ void softmax_wide(const float *x, float *y, int rows) {
    const int r = blockIdx.x;
    if (r < rows) {
        const float *xr = x + (long)r * COLS;
        float m = -INFINITY;
        {
            for (int c = threadIdx.x; c < COLS; c += blockDim.x) {
                m = fmaxf(m, xr[c]);
            }
            for (int offset = 16; offset > 0; offset >>= 1) {
                m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
            }
            __shared__ decltype(m) maxima[32];
            if (threadIdx.x % 32 == 0) {
                maxima[threadIdx.x / 32] = m;
            }
            __syncthreads();
            m = maxima[0];
            for (int warp = 1; warp < blockDim.x / 32; warp++) {
                m = fmaxf(m, maxima[warp]);
            }
            __syncthreads();
        }
        double sum = 0.0;
        {
            decltype(sum) partial = 0;
            for (int c = threadIdx.x; c < COLS; c += blockDim.x) {
                partial += exp((double)(xr[c] - m));
            }
            for (int offset = 16; offset > 0; offset >>= 1) {
                partial += __shfl_xor_sync(0xffffffffu, partial, offset);
            }
            __shared__ decltype(sum) partials[32];
            if (threadIdx.x % 32 == 0) {
                partials[threadIdx.x / 32] = partial;
            }
            __syncthreads();
            partial = partials[0];
            for (int warp = 1; warp < blockDim.x / 32; warp++) {
                partial += partials[warp];
            }
            __syncthreads();
            sum += partial;
        }
        for (int c = threadIdx.x; c < COLS; c += blockDim.x) {
            y[(long)r * COLS + c] = (float)(exp((double)(xr[c] - m)) / sum);
        }
    }
}
