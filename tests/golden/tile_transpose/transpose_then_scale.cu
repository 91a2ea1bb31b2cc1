/* klc-spec
kernel: transpose_then_scale
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
// Near miss: the thread goes on after its store and reads the element it stored. With the
// tile, that element is stored by another thread of the block (no barrier between): refused.
__global__ void transpose_then_scale(float* out, const float* in, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        out[c * rows + r] = in[r * cols + c];
    }
    if (r < rows && c < cols) {
        out[c * rows + r] *= 2.0f;
    }
}
