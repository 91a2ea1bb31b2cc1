/* klc-spec
kernel: col_sum_until_nan
sizes: {rows: 4096, cols: 1024}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: out, shape: [cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 256)"]
block: [256]
bytes: 4 * rows * cols + 4 * cols
flops: rows * cols
*/
// Near miss: the column's sum stops at its first NaN; split over row slices, each slice
// would stop at its own.
__global__ void col_sum_until_nan(const float* x, float* out, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float s = 0.0f;
    for (int r = 0; r < rows; r++) {
        float v = x[r * cols + c];
        if (v != v) break;
        s += v;
    }
    out[c] = s;
}
