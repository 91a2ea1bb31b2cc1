/* klc-spec
kernel: transpose_rows_tile
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
// in[r * cols + c]. The expert of the transpose_rows_tile lineage, written on a block
// shorter than its tile (TILE x ROWS threads, a TILE x TILE tile: the tile's edge is
// blockDim.x), with each optimization one separable code shape (README.md names the pass
// that removes each):
//   - several rows per thread: the thread's column c and its tile's first row r, then a
//     loop j = 0, ROWS, .. < TILE over the rows r + j (the step is blockDim.y);
//   - the tile staged in shared memory: the loop reads rows of `in` into it (consecutive
//     threads, consecutive columns), a barrier, and a second loop writes rows of `out` from
//     the tile's columns, its c and r redeclared with the thread indices swapped, so that
//     consecutive threads store consecutive elements too;
//   - one column of padding ([TILE][TILE + 1]): a tile column spans all 32 banks.
// Bounds are checked per element, so any rows and cols work.
template <int TILE, int ROWS>
__global__ void transpose_rows_tile(float* out, const float* in, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.x + threadIdx.y;
    for (int j = 0; j < blockDim.x; j += blockDim.y) {
        if (r + j < rows && c < cols) {
            out[c * rows + (r + j)] = in[(r + j) * cols + c];
        }
    }
}
