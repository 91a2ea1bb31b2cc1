/* klc-spec
kernel: col_cumsum
sizes: {rows: 4096, cols: 1024}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 256)"]
block: [256]
bytes: 8 * rows * cols
flops: rows * cols
*/
// Near miss: a running sum down each column, stored at every row (a scan, not a reduction):
// split over threads, each would store its own partial prefix.
__global__ void col_cumsum(float* x, float* y, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        float s = 0.0f;
        for (int r = 0; r < rows; r++) {
            y[r * cols + c] = s;
            s += x[r * cols + c];
        }
    }
}
