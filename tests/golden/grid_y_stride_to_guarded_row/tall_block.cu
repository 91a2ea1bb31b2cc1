/* klc-spec
kernel: row_scale
sizes: {rows: 4096, cols: 512}
args:
  - {name: y, shape: [rows, cols], role: out}
  - {name: x, shape: [rows, cols], role: in}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: [1, 64]
block: [128, 2]
bytes: 8 * rows * cols
*/
// Rows blockIdx.y, gridDim.y apart, but the block is two threads tall: both of its rows of
// threads walk the same rows.
__global__ void row_scale(float* y, const float* x, int rows, int cols) {
    for (int r = blockIdx.y; r < rows; r += gridDim.y) {
        for (int c = threadIdx.x; c < cols; c += blockDim.x) {
            y[r * cols + c] = 2.0f * x[r * cols + c];
        }
    }
}
