/* klc-spec
kernel: row_sumsq
sizes: {rows: 4096, cols: 1024}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: out, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 4 * rows * cols + 4 * rows
flops: 2 * rows * cols
*/
// Near miss: a thread per ROW (its loop walks its own row through a row pointer; the index
// never appears in the loop): thread_per_row_to_warp_per_row's shape, not a column walk.
__global__ void row_sumsq(const float* x, float* out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* xr = x + (size_t)r * cols;
    float s = 0.0f;
    for (int c = 0; c < cols; c++) {
        s += xr[c] * xr[c];
    }
    out[r] = s;
}
