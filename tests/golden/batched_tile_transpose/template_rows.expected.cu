/* klc-spec
kernel: batched_transpose
template: {BLOCK: 256}
sizes: {batch: 64, rows: 128, cols: 4096}
verify_sizes:
  - {batch: 2, rows: 16, cols: 512}
  - {batch: 1, rows: 19, cols: 333}
  - {batch: 3, rows: 1, cols: 3}
args:
  - {name: src, shape: [batch, rows, cols], role: in, init: normal}
  - {name: dst, shape: [batch, cols, rows], role: out}
  - {name: batch, value: batch}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, BLOCK)", rows, batch]
block: ["ceil_div(BLOCK, 16)", 16]
bytes: 8 * batch * rows * cols
flops: 0
*/
// A batched matrix transpose, templated on the block size, __restrict__ pointers, unsigned
// indices, a slice size computed once, a double destination (the float read is widened).
template <int BLOCK>
__global__ void batched_transpose(const float* __restrict__ src, double* __restrict__ dst,
                                  int batch, int rows, int cols) {
    __shared__ float tile[16][16];
    int row0 = blockIdx.y / 16 * 16;
    int group_blocks = min(16, (int)gridDim.y - row0);
    for (int sub = blockIdx.y - row0; sub < 16; sub += group_blocks) {
        {
            unsigned col = (blockIdx.x * 16 + sub) * 16 + threadIdx.x;
            unsigned row = row0 + threadIdx.y;
            unsigned b = blockIdx.z;
            if (col < cols && row < gridDim.y) {
                const size_t slice = (size_t)rows * cols;
                tile[threadIdx.y][threadIdx.x] = src[b * slice + (size_t)row * cols + col];
            }
        }
        __syncthreads();
        {
            unsigned col = (blockIdx.x * 16 + sub) * 16 + threadIdx.y;
            unsigned row = row0 + threadIdx.x;
            unsigned b = blockIdx.z;
            if (col < cols && row < gridDim.y) {
                const size_t slice = (size_t)rows * cols;
                dst[b * slice + (size_t)col * rows + row] = tile[threadIdx.x][threadIdx.y];
            }
        }
        __syncthreads();
    }
}
