/* klc-spec
kernel: col_sum_bias
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
// Near miss: the sum starts at 1, so split over eight threads it would count 1 eight times.
__global__ void col_sum_bias(float* x, float* out, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        float s = 1.0f;
        for (int r = 0; r < rows; r++) {
            s += x[r * cols + c];
        }
        out[c] = s;
    }
}
