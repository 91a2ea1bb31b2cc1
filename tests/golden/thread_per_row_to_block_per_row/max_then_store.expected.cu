/* klc-spec
kernel: max_then_store
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
flops: 3 * rows * cols
timeout_s: 60
*/
// The maximum followed by a store in the same sweep (statements that do not read it), the
// output updated in place afterwards by the thread that stored each element.
__global__ void max_then_store(const float* x, float* y, int rows, int cols) {
    const int r = blockIdx.x;
    if (r < rows) {
        const float* xr = x + (size_t)r * cols;
        float* yr = y + (size_t)r * cols;
        float m = -INFINITY;
        {
            for (int c = threadIdx.x; c < cols; c += blockDim.x) {
                const float v = xr[c] * 0.5f;
                m = fmaxf(m, v);
                yr[c] = v;
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
        for (int c = threadIdx.x; c < cols; c += blockDim.x) {
            yr[c] -= m;
        }
    }
}
