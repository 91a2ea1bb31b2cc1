/* klc-spec
kernel: transpose_unsigned
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
// Unsigned indices, a block of 32 x 32, a fresh name for the tile taken.
__global__ void transpose_unsigned(float* __restrict__ out, const float* __restrict__ in,
                                   unsigned rows, unsigned cols) {
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
    const unsigned n = rows * cols;
    if (row < rows && col < cols) {
        out[col * rows + row] = in[row * cols + col];
    }
}
