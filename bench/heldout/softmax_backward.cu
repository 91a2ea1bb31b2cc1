/* klc-spec
kernel: softmax_backward
sizes: {rows: 16384, cols: 4096}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
args:
  - {name: y, shape: [rows, cols], role: in, init: "uniform(0, 0.01)"}
  - {name: dy, shape: [rows, cols], role: in, init: normal}
  - {name: dx, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 12 * rows * cols
flops: 4 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 180
*/
// The backward pass of a row-wise softmax, given its output y and the gradient dy:
//   dx[r, c] = y[r, c] * (dy[r, c] - sum over k of dy[r, k] * y[r, k]).
// One thread per row: a pass for the dot product, a second pass (reading y and dy again)
// for the output.
// bytes: y and dy read once, dx written once (12 * rows * cols).
// flops: the dot product's multiply-add (2) and the output's subtract and multiply (2) per
// element.
// The tolerance is relative to the size of dx over the buffer, so a reordered dot product
// passes.
__global__ void softmax_backward(const float* y, const float* dy, float* dx, int rows,
                                 int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float dot = 0.0f;
        for (int c = 0; c < cols; c++) {
            dot += dy[r * cols + c] * y[r * cols + c];
        }
        for (int c = 0; c < cols; c++) {
            dx[r * cols + c] = y[r * cols + c] * (dy[r * cols + c] - dot);
        }
    }
}
