/* klc-spec
kernel: row_max_int
sizes: {rows: 4096, cols: 1024}
verify_sizes:
  - {rows: 256, cols: 512}
  - {rows: 77, cols: 1001}
  - {rows: 3, cols: 5}
args:
  - {name: in, shape: [rows, cols], role: in, init: "randint(0, 100)"}
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
// Maximum of each row of integers with an if: fmaxf would turn the ints into floats
// (exact only below 2^24), so the if spelling of an int maximum is not the fmaxf sub-rule.
__global__ void row_max_int(const int* in, int* out, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        const int* x = in + row * cols;
        int hi = x[0];
        for (int c = 1; c < cols; c++) {
            if (x[c] > hi) hi = x[c];
        }
        out[row] = hi;
    }
}
