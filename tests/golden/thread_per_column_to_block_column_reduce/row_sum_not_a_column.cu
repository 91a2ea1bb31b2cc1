/* klc-spec
kernel: row_dot
sizes: {rows: 4096, cols: 1024}
args:
  - {name: a, shape: [rows, cols], role: in, init: normal}
  - {name: b, shape: [rows, cols], role: in, init: normal}
  - {name: out, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 8 * rows * cols + 4 * rows
flops: 2 * rows * cols
*/
// Near miss: a thread per row, the element indexed row * cols + c (the thread's index is
// multiplied, the loop's added): a walk along the thread's own row, the shape of
// thread_per_row_to_warp_per_row, not of a column reduction.
__global__ void row_dot(const float* a, const float* b, float* out, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float dot = 0.0f;
        for (int c = 0; c < cols; c++) {
            dot += a[row * cols + c] * b[row * cols + c];
        }
        out[row] = dot;
    }
}
