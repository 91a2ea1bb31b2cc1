/* klc-spec
kernel: partial_rows
sizes: {rows: 4096, cols: 1024}
verify_sizes:
  - {rows: 37, cols: 99}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: b, shape: [rows], role: in, init: normal}
  - {name: y, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 4 * rows * cols + 8 * rows
flops: rows * cols
timeout_s: 120
*/
// A near miss: the accumulator is itself called `partial`, the name the rewrite declares
// for the lanes' sums (it would shadow it): refused rather than renamed.
__global__ void partial_rows(const float* x, const float* b, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float partial = b[r];
        for (int c = 0; c < cols; c++) {
            partial += x[(size_t)r * cols + c];
        }
        y[r] = partial;
    }
}
