/* klc-spec
kernel: row_max_ternary
sizes: {rows: 4096, cols: 1024}
verify_sizes:
  - {rows: 256, cols: 512}
  - {rows: 77, cols: 1001}
  - {rows: 3, cols: 5}
args:
  - {name: in, shape: [rows, cols], role: in, init: "normal(0, 2)"}
  - {name: out, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 4 * rows * cols
flops: 2 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 180
*/
// Maximum of each row with a conditional expression, the index's product in parentheses,
// the step spelled c = c + 1 and a bare body.
__global__ void row_max_ternary(const float* in, float* out, int rows, int cols) {
    int i = (blockIdx.x * blockDim.x) + threadIdx.x;
    if (i < rows) {
        const float* x = in + i * cols;
        float m = x[0];
        for (int c = 0; c < cols; c = c + 1)
            m = x[c] > m ? x[c] : m;
        out[i] = m;
    }
}
