/* klc-spec
kernel: transpose_tile_bounds
template: {TILE: 32, ROWS: 8}
sizes: {rows: 8192, cols: 8192}
verify_sizes:
  - {rows: 256, cols: 512}
  - {rows: 1000, cols: 333}
  - {rows: 31, cols: 67}
  - {rows: 3, cols: 5}
args:
  - {name: out, shape: [cols, rows], role: out}
  - {name: in, shape: [rows, cols], role: in, init: normal}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, TILE)", "ceil_div(rows, TILE)"]
block: [TILE, ROWS]
bytes: 8 * rows * cols
flops: 0
*/
// out (cols x rows) = transpose of in (rows x cols), both row-major: out[c * rows + r] =
// in[r * cols + c]. The expert of the transpose_tile_bounds lineage: the tiled transpose of
// several rows per thread of the transpose_tile_rows lineage, whose loops over the tile's
// rows have constant bounds:
//   - each thread copies TILE / ROWS rows of the TILE x TILE tile in a loop `j < TILE;
//     j += ROWS`, in the read phase and in the write phase; TILE and ROWS are the block's
//     extents (a TILE x ROWS block), so the trip count is known to the compiler, which
//     unrolls the loops and issues a thread's four loads together (with `j < blockDim.x;
//     j += blockDim.y` it cannot);
//   - the block's tile is staged in shared memory (coalesced reads of `in`, barrier,
//     coalesced writes of `out` from the tile's columns);
//   - one column of padding ([TILE][TILE + 1]): a tile column spans all 32 banks.
// Bounds are checked per element, so any rows and cols work.
template <int TILE, int ROWS>
__global__ void transpose_tile_bounds(float* out, const float* in, int rows, int cols) {
    __shared__ float tile[TILE][TILE];
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < TILE; j += ROWS) {
        int r = blockIdx.y * blockDim.x + threadIdx.y + j;
        if (r < rows && c < cols) {
            tile[threadIdx.y + j][threadIdx.x] = in[r * cols + c];
        }
    }
    __syncthreads();
    for (int j = 0; j < TILE; j += ROWS) {
        int c = blockIdx.x * blockDim.x + threadIdx.y + j;
        int r = blockIdx.y * blockDim.x + threadIdx.x;
        if (r < rows && c < cols) {
            out[c * rows + r] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
