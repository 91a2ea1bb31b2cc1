/* klc-spec
kernel: transpose
template: {TILE: 32, ROWS: 8}
sizes: {rows: 8192, cols: 8192}
verify_sizes:
  - {rows: 256, cols: 512}
  - {rows: 1000, cols: 333}
  - {rows: 31, cols: 67}
args:
  - {name: src, shape: [rows, cols], role: in}
  - {name: dst, shape: [cols, rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, TILE)", "ceil_div(rows, TILE)"]
block: [TILE, "(ROWS) * 4"]
bytes: 8 * rows * cols
*/
// dst (cols x rows) = transpose of src (rows x cols), both row-major. The expert of the
// transpose lineage; each optimization is one separable code shape (README.md names the
// pass that removes it):
//   - __launch_bounds__(TILE * ROWS), a templated tile (constant loop bounds, #pragma unroll);
//   - const __restrict__ input;
//   - a TILE x TILE tile staged in shared memory, so that both the read of src and the
//     write of dst are coalesced (the block reads tile rows and writes tile columns);
//   - one column of padding ([TILE][TILE + 1]): reading a tile column hits 32 banks;
//   - several rows per thread: a TILE x ROWS block walks the tile in TILE / ROWS steps.
// Bounds are checked per element, so any rows and cols work.
template <int TILE, int ROWS>
__global__ void 
transpose(const float* src, float* __restrict__ dst, int rows, int cols) {
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    {
        const int j = 0;
        if (x < cols && y + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = src[(size_t)(y + j) * cols + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    {
        const int j = 0;
        if (x < rows && y + j < cols) {
            dst[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
