/* klc-spec
kernel: standardize_one_pass
sizes: {rows: 1024, cols: 8192}
verify_sizes:
  - {rows: 37, cols: 99}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: [rows]
block: [256]
bytes: 8 * rows * cols
flops: 5 * rows * cols
timeout_s: 120
*/
// One-pass row standardization: the sum and the sum of squares in one sweep that also
// copies the row (two accumulators, reduced together across the block), then an in-place
// update of the output by the thread that copied each element.
__global__ void standardize_one_pass(const float* x, float* y, int rows, int cols) {
    const int r = blockIdx.x;
    if (r < rows) {
        const float* xr = x + (size_t)r * cols;
        float* yr = y + (size_t)r * cols;
        float s = 0.0f;
        float sq = 0.0f;
        {
            decltype(s) partial = 0;
            decltype(sq) partial2 = 0;
            for (int c = threadIdx.x; c < cols; c += blockDim.x) {
                yr[c] = xr[c];
                partial += xr[c];
                partial2 += xr[c] * xr[c];
            }
            for (int offset = 16; offset > 0; offset >>= 1) {
                partial += __shfl_xor_sync(0xffffffffu, partial, offset);
                partial2 += __shfl_xor_sync(0xffffffffu, partial2, offset);
            }
            __shared__ decltype(s) partials[32];
            __shared__ decltype(sq) partials2[32];
            if (threadIdx.x % 32 == 0) {
                partials[threadIdx.x / 32] = partial;
                partials2[threadIdx.x / 32] = partial2;
            }
            __syncthreads();
            partial = partials[0];
            partial2 = partials2[0];
            for (int warp = 1; warp < blockDim.x / 32; warp++) {
                partial += partials[warp];
                partial2 += partials2[warp];
            }
            __syncthreads();
            s += partial;
            sq += partial2;
        }
        const float mean = s / cols;
        const float rstd = rsqrtf(sq / cols - mean * mean + 1e-5f);
        for (int c = threadIdx.x; c < cols; c += blockDim.x) {
            yr[c] = (yr[c] - mean) * rstd;
        }
    }
}
