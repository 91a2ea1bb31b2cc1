/* klc-spec
kernel: scale_rows_pairs
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
// Scale each row by its largest magnitude, the scaling loop unrolled by hand two columns at
// a time: the rewrite does not stride a loop that steps by 2, so every lane would scale
// every element.
__global__ void scale_rows_pairs(const float* in, float* out, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float* y = out + row * cols;
        float amax = 0.0f;
        for (int c = 0; c < cols; c++) {
            y[c] = in[row * cols + c];
            amax = fmaxf(amax, fabsf(y[c]));
        }
        float s = 1.0f / fmaxf(amax, 1e-12f);
        for (int c = 0; c + 1 < cols; c += 2) {
            y[c] *= s;
            y[c + 1] *= s;
        }
    }
}
