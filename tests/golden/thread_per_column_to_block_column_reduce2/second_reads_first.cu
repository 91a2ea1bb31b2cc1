/* klc-spec
kernel: col_weird
sizes: {rows: 4096, cols: 1024}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: a, shape: [cols], role: out}
  - {name: b, shape: [cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 256)"]
block: [256]
bytes: 4 * rows * cols + 8 * cols
flops: 2 * rows * cols
*/
// Near miss: the second sum adds the running value of the first (a sum of prefix sums):
// no longer a plain sum that partial sums can be split for.
__global__ void col_weird(float* x, float* a, float* b, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        float s = 0.0f, t = 0.0f;
        for (int r = 0; r < rows; r++) {
            s += x[r * cols + c];
            t += s;
        }
        a[c] = s;
        b[c] = t;
    }
}
