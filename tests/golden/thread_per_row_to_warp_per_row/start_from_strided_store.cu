/* klc-spec
kernel: scaled_then_sum
sizes: {rows: 4096, cols: 1024}
verify_sizes:
  - {rows: 37, cols: 99}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: y, shape: [rows, cols], role: out}
  - {name: s, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 8 * rows * cols + 4 * rows
flops: 2 * rows * cols
timeout_s: 120
*/
// A near miss: the sum starts from y[r * cols], an element the loop before stores; strided
// by lane, that store is lane 0's, and another lane would read the element before it lands
// (a start that depends on the lane): refused.
__global__ void scaled_then_sum(const float* x, float* y, float* s, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        for (int c = 0; c < cols; c++) {
            y[r * cols + c] = 2.0f * x[r * cols + c];
        }
        float acc = y[r * cols];
        for (int c = 1; c < cols; c++) {
            acc += y[r * cols + c];
        }
        s[r] = acc;
    }
}
