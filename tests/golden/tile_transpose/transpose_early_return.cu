/* klc-spec
kernel: transpose_early_return
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
// Near miss: the bounds check is an early return. A barrier after it would not be reached
// by the threads that left, so the skill does not match this spelling (no rewrite).
__global__ void transpose_early_return(float* out, const float* in, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= rows || c >= cols) return;
    out[c * rows + r] = in[r * cols + c];
}
