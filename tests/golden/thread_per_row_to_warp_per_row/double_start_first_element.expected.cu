/* klc-spec
kernel: row_total_from_first
sizes: {rows: 16384, cols: 2048}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 37, cols: 999}
  - {rows: 3, cols: 1}
args:
  - {name: x, shape: [rows, cols], role: in, init: "normal(0, 2)"}
  - {name: total, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["(ceil_div(rows, 256)) * 32"]
block: [256]
bytes: 4 * rows * cols + 4 * rows
flops: rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 120
*/
// Row totals in double, the sum starting from the row's first element and the loop from
// column 1; a 64-bit row offset, `T* x` spelling.
__global__ void row_total_from_first(const float* x, float* total, int rows, int cols) {
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (row < rows) {
        const float* xr = x + (size_t)row * cols;
        double s = xr[0];
        {
            decltype(s) partial = 0;
            for (int c = 1 + lane; c < cols; c += 32) {
                partial += (double)xr[c];
            }
            for (int offset = 16; offset > 0; offset >>= 1) {
                partial += __shfl_xor_sync(0xffffffffu, partial, offset);
            }
            s += partial;
        }
        total[row] = (float)s;
    }
}
