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
  - {name: again, shape: [1], role: out}
grid: ["ceil_div(cols, 16)", "ceil_div(rows, 16)"]
block: [16, 16]
bytes: 8 * rows * cols
flops: 0
*/
// Near miss: a scaled copy of the output follows the tile's write phase: the match does not
// end the kernel (a thread there would read elements other threads now store).
__global__ void transpose_tile16(float *out, const float *in, int rows, int cols, float *again) {
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
    again[0] = out[0];
}
