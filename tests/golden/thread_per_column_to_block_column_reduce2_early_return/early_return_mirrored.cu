/* klc-spec
kernel: col_sum_and_max_sq
sizes: {rows: 16384, cols: 2048}
verify_sizes:
  - {rows: 301, cols: 999}
  - {rows: 3, cols: 5}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: mean, shape: [cols], role: out}
  - {name: ms, shape: [cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 128)"]
block: [128]
bytes: 4 * rows * cols + 8 * cols
flops: 3 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// Column mean and mean square: the check spelled cols <= c, a constant declared after it,
// a double and a float accumulator, a 64-bit offset, an early return in the epilogue.
__global__ void col_sum_and_max_sq(const float* x, float* mean, float* ms, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (cols <= c) return;
    const float inv = 1.0f / rows;
    double s = 0.0;
    float q = 0.0f;
    for (int r = 0; r < rows; r++) {
        float v = x[(long)r * cols + c];
        s += v;
        q += v * v;
    }
    mean[c] = (float)s * inv;
    if (ms == nullptr) return;
    ms[c] = q * inv;
}
