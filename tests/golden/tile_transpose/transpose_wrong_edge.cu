/* klc-spec
kernel: transpose_wrong_edge
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
// Near miss: the index multiplies blockIdx by 16 while the block is 32 x 32: the threads'
// columns overlap, not a tile of the block (refused).
#define EDGE 16

__global__ void transpose_wrong_edge(float* out, const float* in, int rows, int cols) {
    int c = blockIdx.x * EDGE + threadIdx.x;
    int r = blockIdx.y * EDGE + threadIdx.y;
    if (r < rows && c < cols) {
        out[c * rows + r] = in[r * cols + c];
    }
}
