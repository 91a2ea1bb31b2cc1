/* klc-spec
kernel: row_running_max
sizes: {rows: 64, len: 131072}
args:
  - {name: y, shape: [rows, len], role: out}
  - {name: x, shape: [rows, len], role: in}
  - {name: rows, value: rows}
  - {name: len, value: len}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 8 * rows * len
*/
// The running maximum along each row: each element depends on all before it, so a tile
// of the row cannot start without the tiles before it.
__global__ void row_running_max(float* y, const float* x, int rows, int len) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float m = -3.0e38f;
        for (int j = 0; j < len; j++) {
            m = fmaxf(m, x[row * len + j]);
            y[row * len + j] = m;
        }
    }
}
