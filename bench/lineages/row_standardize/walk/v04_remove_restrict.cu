/* klc-spec
kernel: row_standardize
sizes: {rows: 16384, cols: 4096}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
args:
  - {name: x, shape: [rows, cols], role: in, init: "normal(0.5, 2)"}
  - {name: y, shape: [rows, cols], role: out}
  - {name: amax, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(ceil_div(rows * 32, 256), 32)"]
block: [256]
bytes: 8 * rows * cols + 4 * rows
flops: 7 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.00001}
timeout_s: 180
*/
// Standardize each row of a row-major rows x cols matrix and report its largest magnitude
// (what an FP8 cast needs for its scale):
//   mean = sum(x[r, :]) / cols,  rstd = 1 / sqrt(sum((x[r, :] - mean)^2) / cols + 1e-5)
//   y[r, c] = (x[r, c] - mean) * rstd,  amax[r] = max over c of |y[r, c]|
// The expert of the row_standardize lineage; each optimization is one separable code shape
// (README.md names the pass that removes it):
//   - __launch_bounds__(256);
//   - const __restrict__ input, __restrict__ outputs (used as row pointers);
//   - one warp per row: lanes stride the row 32 apart (coalesced), each sweep's partial
//     sum or maximum is combined across the warp with xor shuffles, so every lane holds the
//     row's value and no shared memory or __syncthreads is needed (every lane also writes
//     the same amax[r]: one store transaction);
//   - rsqrtf for 1 / sqrt.
// bytes: x read once (the second and third sweeps re-read a row that is still in L1/L2),
// y written once, amax written once. flops per element: the sum (1), the squared deviation
// (3), the output and its magnitude (3).
__global__ void 
row_standardize(const float* x, float* y, float* __restrict__ amax,
                int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* xr = x + (size_t)r * cols;
        float* yr = y + (size_t)r * cols;
        float sum = 0.0f;
        for (int c = 0; c < cols; c++) {
            sum += xr[c];
        }
        const float mean = sum / cols;
        float sq = 0.0f;
        for (int c = 0; c < cols; c++) {
            const float d = xr[c] - mean;
            sq += d * d;
        }
        const float rstd = rsqrtf(sq / cols + 1e-5f);
        float m = 0.0f;
        for (int c = 0; c < cols; c++) {
            const float v = (xr[c] - mean) * rstd;
            yr[c] = v;
            m = fmaxf(m, fabsf(v));
        }
        amax[r] = m;
    }
}
