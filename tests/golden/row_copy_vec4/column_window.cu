/* klc-spec
kernel: column_window
sizes: {rows: 8192, cols: 4096, ld: 8192, c0: 64}
verify_sizes:
  - {rows: 64, cols: 100, ld: 301, c0: 7}
  - {rows: 3, cols: 5, ld: 9, c0: 1}
args:
  - {name: dst, shape: [rows, cols], role: out}
  - {name: src, shape: [rows, ld], role: in, init: normal}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
  - {name: ld, value: ld}
  - {name: c0, value: c0}
grid: ["ceil_div(cols, 32)", "ceil_div(rows, 8)"]
block: [32, 8]
bytes: 8 * rows * cols
flops: 0
*/
// A window of columns c0 .. c0 + cols of a row-major matrix with leading dimension ld,
// copied to a dense rows x cols matrix: nothing to declare before the copy; the source rows
// start unaligned where ld or c0 is not a multiple of 4 (those groups are copied one by one).
__global__ void column_window(float *dst, const float *src, int rows, int cols, int ld,
                              int c0) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        dst[(size_t)r * cols + c] = src[(size_t)r * ld + c0 + c];
    }
}
