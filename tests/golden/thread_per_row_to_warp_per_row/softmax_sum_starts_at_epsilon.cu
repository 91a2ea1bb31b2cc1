/* klc-spec
kernel: softmax_eps_sum
sizes: {rows: 8192, cols: 1024}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
args:
  - {name: in, shape: [rows, cols], role: in, init: "normal(0, 3)"}
  - {name: out, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 8 * rows * cols
flops: 4 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 180
*/
// A naive softmax whose sum starts at a small epsilon (against a division by zero): split
// across 32 lanes and added back with shuffles, the epsilon would count 32 times, so the
// lanes sum into a fresh zero partial, reduced across the warp and added once to the
// epsilon; the in-place division is then strided like the loops before it.
__global__ void softmax_eps_sum(const float* in, float* out, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        const float* x = in + row * cols;
        float* y = out + row * cols;
        float m = -INFINITY;
        for (int c = 0; c < cols; c++) {
            m = fmaxf(m, x[c]);
        }
        float s = 1e-20f;
        for (int c = 0; c < cols; c++) {
            y[c] = expf(x[c] - m);
            s += y[c];
        }
        for (int c = 0; c < cols; c++) {
            y[c] /= s;
        }
    }
}
