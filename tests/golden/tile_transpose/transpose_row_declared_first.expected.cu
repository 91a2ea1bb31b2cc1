/* klc-spec
kernel: transpose_row_first
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
// The row index declared before the column index (the decl_order isomorphism: two index
// declarations that read neither variable the other declares match in either order; the
// tile's template declares the column first).
__global__ void transpose_row_first(float *out, const float *in, int rows, int cols) {
    __shared__ float tile[32][32];
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        tile[threadIdx.y][threadIdx.x] = in[row * cols + col];
    }
    __syncthreads();
    {
        int col = blockIdx.x * blockDim.x + threadIdx.y;
        int row = blockIdx.y * blockDim.y + threadIdx.x;
        if (row < rows && col < cols) {
            out[col * rows + row] = tile[threadIdx.x][threadIdx.y];
        }
    }
}
