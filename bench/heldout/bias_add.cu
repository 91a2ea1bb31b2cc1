/* klc-spec
kernel: bias_add
sizes: {rows: 8192, cols: 8192}
verify_sizes:
  - {rows: 64, cols: 1024}
  - {rows: 129, cols: 1000}
  - {rows: 7, cols: 37}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: bias, shape: [cols], role: in, init: "uniform(-1, 1)"}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows * cols, 256)"]
block: [256]
bytes: 8 * rows * cols + 4 * cols
flops: rows * cols
*/
// y[r, c] = x[r, c] + bias[c] for a row-major rows x cols matrix, one element per thread
// over the flattened matrix.
// bytes: x read once, y written once (8 * rows * cols), bias read once (4 * cols).
// flops: one add per element.
__global__ void bias_add(const float* x, const float* bias, float* y, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        int c = i % cols;
        y[i] = x[i] + bias[c];
    }
}
