/* klc-spec
kernel: row_sum_sq_terms_reversed
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
// Sum of squares of each row, one thread per row: the index written thread-first, the loop
// step as ++c, a bare loop body, the accumulation spelled out as acc = acc + ...
__global__ void row_sum_sq_terms_reversed(const float* in, float* out, int rows, int cols) {
    int row = threadIdx.x + blockIdx.x * blockDim.x;
    if (row < rows) {
        const float *p = in + row * cols;
        float acc = 0.0f;
        for (int c = 0; c < cols; ++c)
            acc = acc + p[c] * p[c];
        out[row] = acc;
    }
}
