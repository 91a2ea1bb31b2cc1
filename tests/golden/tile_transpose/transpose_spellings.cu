/* klc-spec
kernel: transpose_spellings
sizes: {rows: 4096, cols: 2048}
verify_sizes:
  - {rows: 256, cols: 512}
  - {rows: 131, cols: 1001}
  - {rows: 3, cols: 5}
args:
  - {name: out, shape: [cols, rows], role: out}
  - {name: in, shape: [rows, cols], role: in, init: normal}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 32)", "ceil_div(rows, 32)"]
block: [32, 32]
bytes: 8 * rows * cols
flops: 0
*/
// Other spellings of the same kernel: T *x spacing, x/y names, the index terms and factors
// in another order, the bounds check column first and unbraced, the product written
// rows * x, a declaration between the indices and the check.
__global__ void transpose_spellings(float *out, const float *in, int rows, int cols) {
    int x = threadIdx.x + blockDim.x * blockIdx.x;
    int y = threadIdx.y + blockIdx.y * blockDim.y;
    int pitch = cols;
    if (x < cols && y < rows)
        out[rows * x + y] = in[y * cols + x];
}
