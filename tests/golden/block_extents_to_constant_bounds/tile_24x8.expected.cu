/* klc-spec
kernel: transpose_tile24
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
grid: ["ceil_div(cols, 24)", "ceil_div(rows, 24)"]
block: [24, 8]
bytes: 8 * rows * cols
flops: 0
*/
// The same tiled transpose on a 24 x 8 block (a tile edge that is no power of two, three rows
// per thread): the bounds are the block's, 24 and 8, whatever shape it has.
__global__ void transpose_tile24(float *out, const float *in, int rows, int cols) {
    __shared__ float tile[24][24 + 1];
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < 24; j += 8) {
        int r = blockIdx.y * blockDim.x + threadIdx.y + j;
        if (r < rows && c < cols) {
            tile[threadIdx.y + j][threadIdx.x] = in[r * cols + c];
        }
    }
    __syncthreads();
    for (int j = 0; j < 24; j += 8) {
        int c = blockIdx.x * blockDim.x + threadIdx.y + j;
        int r = blockIdx.y * blockDim.x + threadIdx.x;
        if (r < rows && c < cols) {
            out[c * rows + r] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
