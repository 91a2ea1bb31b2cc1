/* klc-spec
kernel: row_sum
sizes: {rows: 4096, cols: 1024}
args:
  - {name: out, shape: [rows], role: out}
  - {name: x, shape: [rows, cols], role: in}
  - {name: cols, value: cols}
grid: [rows]
block: [1]
bytes: 4 * rows * cols + 4 * rows
*/
// A row's sum carried from column to column: strided over the block's threads, each thread
// would hold a partial sum that nothing adds up.
__global__ void row_sum(float* out, const float* x, int cols) {
    const int row = blockIdx.x;
    float s = 0.0f;
    for (int c = 0; c < cols; c++) {
        s += x[row * cols + c];
    }
    out[row] = s;
}
