/* klc-spec
kernel: row_sum_count
sizes: {rows: 4096, cols: 4096}
verify_sizes:
  - {rows: 37, cols: 99}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: y, shape: [rows], role: out}
  - {name: count, shape: [1], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 4 * rows * cols
flops: rows * cols
timeout_s: 60
*/
// A near miss: code after the row's work (thread 0 counts the launch). With a warp per
// row, every lane of warp 0 has row 0 and would count: refused (kernel_body).
__global__ void row_sum_count(const float* x, float* y, int* count, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; c++) {
            s += x[r * cols + c];
        }
        y[r] = s;
    }
    if (r == 0) {
        count[0] += 1;
    }
}
