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
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 8 * rows * cols
flops: 5 * rows * cols
timeout_s: 120
*/
// One-pass row standardization: the sum and the sum of squares in one sweep that also
// copies the row (two accumulators, reduced together across the block), then an in-place
// update of the output by the thread that copied each element.
__global__ void standardize_one_pass(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* xr = x + (size_t)r * cols;
        float* yr = y + (size_t)r * cols;
        float s = 0.0f;
        float sq = 0.0f;
        for (int c = 0; c < cols; c++) {
            yr[c] = xr[c];
            s += xr[c];
            sq += xr[c] * xr[c];
        }
        const float mean = s / cols;
        const float rstd = rsqrtf(sq / cols - mean * mean + 1e-5f);
        for (int c = 0; c < cols; c++) {
            yr[c] = (yr[c] - mean) * rstd;
        }
    }
}
