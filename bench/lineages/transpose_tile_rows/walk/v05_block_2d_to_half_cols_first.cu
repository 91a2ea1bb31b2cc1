/* klc-spec
kernel: transpose_tile_rows
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
grid: ["(ceil_div(cols, TILE)) * 2", "(ceil_div(rows, TILE)) * 2"]
block: ["ceil_div(TILE, 2)", "ceil_div((ROWS) * 4, 2)"]
bytes: 8 * rows * cols
flops: 0
*/
// out (cols x rows) = transpose of in (rows x cols), both row-major: out[c * rows + r] =
// in[r * cols + c]. The expert of the transpose_tile_rows lineage: the tiled transpose of
// the transpose_tile lineage (the spelling of a first 2-D transpose, staged through a
// padded shared tile), with several rows per thread on top:
//   - the block is TILE x ROWS threads and its tile TILE x TILE elements: the tile's edge is
//     the block's x extent (blockDim.x), and each thread copies blockDim.x / blockDim.y rows
//     of it in a loop whose step is the block's y extent (blockDim.y), in the read phase and
//     in the write phase: four independent loads in flight per thread, a quarter of the
//     threads, and the same tile;
//   - the block's tile is staged in shared memory (coalesced reads of `in`, barrier,
//     coalesced writes of `out` from the tile's columns);
//   - one column of padding ([TILE][TILE + 1]): a tile column spans all 32 banks.
// Bounds are checked per element, so any rows and cols work.
template <int TILE, int ROWS>
__global__ void transpose_tile_rows(float* out, float* in, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        out[c * rows + r] = in[r * cols + c];
    }
}
