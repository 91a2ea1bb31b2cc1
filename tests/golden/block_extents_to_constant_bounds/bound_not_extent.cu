/* klc-spec
kernel: transpose_rows
sizes: {rows: 4096, cols: 2048}
args:
  - {name: out, shape: [cols, rows], role: out}
  - {name: in, shape: [rows, cols], role: in, init: normal}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
  - {name: tile, value: 32}
grid: ["ceil_div(cols, 32)", "ceil_div(rows, 32)"]
block: [32, 8]
bytes: 8 * rows * cols
flops: 0
*/
// Near miss: the loop's bound is a parameter, not the block's x extent (the anchor asks for
// blockDim.x itself): no match.
__global__ void transpose_rows(float *out, const float *in, int rows, int cols, int tile) {
    __shared__ float t[32][33];
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < tile; j += blockDim.y) {
        int r = blockIdx.y * tile + threadIdx.y + j;
        if (r < rows && c < cols) {
            t[threadIdx.y + j][threadIdx.x] = in[r * cols + c];
        }
    }
    __syncthreads();
    for (int j = 0; j < tile; j += blockDim.y) {
        int c = blockIdx.x * tile + threadIdx.y + j;
        int r = blockIdx.y * tile + threadIdx.x;
        if (r < rows && c < cols) {
            out[c * rows + r] = t[threadIdx.x][threadIdx.y + j];
        }
    }
}
