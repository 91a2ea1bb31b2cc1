/* klc-spec
kernel: transpose_const
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
// A first transpose with its thread indices declared const: the rewrite declares them again
// in its second phase, without the const, as it does for `int`.
__global__ void transpose_const(float* __restrict__ out, const float* __restrict__ in,
                                int rows, int cols) {
    __shared__ float tile[32][32];
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y < rows && x < cols) {
        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    }
    __syncthreads();
    {
        int x = blockIdx.x * blockDim.x + threadIdx.y;
        int y = blockIdx.y * blockDim.y + threadIdx.x;
        if (y < rows && x < cols) {
            out[x * rows + y] = tile[threadIdx.x][threadIdx.y];
        }
    }
}
