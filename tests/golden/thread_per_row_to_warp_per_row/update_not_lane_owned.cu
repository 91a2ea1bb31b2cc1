/* klc-spec
kernel: row_sum_into_output
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
// Each row's sum accumulated straight into the output row's first element, in a loop over
// the row: strided by lane, the 32 lanes would add to the same element at once.
__global__ void row_sum_into_output(const float* in, float* out, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float *o = out + row * cols;
        o[0] = 0.0f;
        for (int c = 0; c < cols; c++) {
            o[0] += in[row * cols + c];
        }
    }
}
