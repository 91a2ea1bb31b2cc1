/* klc-spec
kernel: transpose_rows
sizes: {rows: 4096, cols: 2048}
args:
  - {name: out, shape: [cols, rows], role: out}
  - {name: in, shape: [rows, cols], role: in, init: normal}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 32)", "ceil_div(rows, 32)"]
block: [32, 8]
bytes: 8 * rows * cols
flops: 0
*/
// Near miss: rows walked in steps of the block with no shared tile and no barrier (a
// thread's own rows): the skill gives constant bounds to the phases of a block that shares
// a tile, as the walk it was learned from had them.
__global__ void transpose_rows(float *out, const float *in, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < blockDim.x; j += blockDim.y) {
        int r = blockIdx.y * blockDim.x + threadIdx.y + j;
        if (r < rows && c < cols) {
            out[c * rows + r] = in[r * cols + c];
        }
    }
}
