/* klc-spec
kernel: transpose_rows
sizes: {rows: 4096, cols: 2048}
args:
  - {name: out, shape: [cols, rows], role: out}
  - {name: in, shape: [rows, cols], role: in, init: normal}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 32)", "ceil_div(rows, 32)"]
block: [32, "min(rows, 8)"]
bytes: 8 * rows * cols
flops: 0
*/
// Near miss: the spec's block has as many rows as the matrix up to 8 (a short matrix runs
// a shorter block): 8 at the profiling size, not one constant at every size.
__global__ void transpose_rows(float *out, const float *in, int rows, int cols) {
    __shared__ float tile[32][33];
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < blockDim.x; j += blockDim.y) {
        int r = blockIdx.y * blockDim.x + threadIdx.y + j;
        if (r < rows && c < cols) {
            tile[threadIdx.y + j][threadIdx.x] = in[r * cols + c];
        }
    }
    __syncthreads();
    for (int j = 0; j < blockDim.x; j += blockDim.y) {
        int c = blockIdx.x * blockDim.x + threadIdx.y + j;
        int r = blockIdx.y * blockDim.x + threadIdx.x;
        if (r < rows && c < cols) {
            out[c * rows + r] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
