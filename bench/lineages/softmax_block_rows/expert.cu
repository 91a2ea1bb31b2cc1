/* klc-spec
kernel: softmax_block_rows
sizes: {rows: 2048, cols: 16384}
verify_sizes:
  - {rows: 64, cols: 4096}
  - {rows: 37, cols: 999}
  - {rows: 5, cols: 33}
  - {rows: 3, cols: 1}
args:
  - {name: x, shape: [rows, cols], role: in, init: "normal(0, 2)"}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: [rows]
block: [256]
bytes: 8 * rows * cols
flops: 4 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 180
*/
// Softmax of each row of a row-major matrix with wide rows (thousands of columns), y[r, c] =
// exp(x[r, c] - max) / sum of exp(x[r, :] - max). The expert of the softmax_block_rows
// lineage; each optimization is one separable code shape (README.md names the pass that
// removes it):
//   - __launch_bounds__(256);
//   - const __restrict__ input, __restrict__ output (used as row pointers);
//   - one block per row: the block's threads stride the row blockDim.x apart from their
//     index (coalesced), and each reduction runs in a block of its own: the warp combines
//     its threads' values with xor shuffles, lane 0 of each warp writes the warp's value to
//     a __shared__ array of 32, a barrier, every thread combines the warps' values in warp
//     order (so all threads hold the same result), and a second barrier before the array
//     could be written again. The sum is taken into a fresh zero partial, added once to the
//     accumulator. Element c is read and written by thread c % blockDim.x in every sweep.
// bytes: x read once (the max sweep; the second sweep's read hits L2 for rows this size is
// not counted), y written once and updated in place. flops: about 4 per element.
__global__ void __launch_bounds__(256)
softmax_block_rows(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    const int r = blockIdx.x;
    if (r < rows) {
        const float* xr = x + (size_t)r * cols;
        float* yr = y + (size_t)r * cols;
        float m = -INFINITY;
        {
            for (int c = threadIdx.x; c < cols; c += blockDim.x) {
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
        float s = 0.0f;
        {
            decltype(s) partial = 0;
            for (int c = threadIdx.x; c < cols; c += blockDim.x) {
                const float v = xr[c];
                const float e = expf(v - m);
                yr[c] = e;
                partial += e;
            }
            for (int offset = 16; offset > 0; offset >>= 1) {
                partial += __shfl_xor_sync(0xffffffffu, partial, offset);
            }
            __shared__ decltype(s) partials[32];
            if (threadIdx.x % 32 == 0) {
                partials[threadIdx.x / 32] = partial;
            }
            __syncthreads();
            partial = partials[0];
            for (int warp = 1; warp < blockDim.x / 32; warp++) {
                partial += partials[warp];
            }
            __syncthreads();
            s += partial;
        }
        const float inv = 1.0f / s;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) {
            yr[c] *= inv;
        }
    }
}
