/* klc-spec
kernel: transpose_32x8_row_first
sizes: {rows: 8192, cols: 8192}
verify_sizes:
  - {rows: 256, cols: 512}
  - {rows: 131, cols: 1001}
  - {rows: 3, cols: 5}
args:
  - {name: out, shape: [cols, rows], role: out}
  - {name: in, shape: [rows, cols], role: in, init: normal}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 32)", "ceil_div(rows, 8)"]
block: [32, 8]
bytes: 8 * rows * cols
flops: 0
*/
// out = in^T, one element per thread of a 32 x 8 block, no shared memory, the row index
// declared before the column index (the decl_order isomorphism).
__global__ void transpose_32x8_row_first(float* out, const float* in, int rows, int cols) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows && c < cols) {
        out[c * rows + r] = in[r * cols + c];
    }
}
