/* klc-spec
kernel: transpose_tile16
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
grid: ["ceil_div(cols, 16)", "ceil_div(rows, 8)"]
block: [16, 8]
bytes: 8 * rows * cols
flops: 0
*/
// Near miss: the same tile code on a 16 x 8 block: thread (x, y) of the write phase must
// store what thread (y, x) read, which needs a square block (the code as it stands is
// already wrong for it; the skill refuses rather than build on it).
__global__ void transpose_tile16(float *out, const float *in, int rows, int cols) {
    __shared__ float tile[16][16 + 1];
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        tile[threadIdx.y][threadIdx.x] = in[r * cols + c];
    }
    __syncthreads();
    {
        int c = blockIdx.x * blockDim.x + threadIdx.y;
        int r = blockIdx.y * blockDim.y + threadIdx.x;
        if (r < rows && c < cols) {
            out[c * rows + r] = tile[threadIdx.x][threadIdx.y];
        }
    }
}
