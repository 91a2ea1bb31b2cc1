/* klc-spec
kernel: transpose_rows_loop
sizes: {n: 8192}
verify_sizes:
  - {n: 256}
  - {n: 96}
  - {n: 32}
args:
  - {name: odata, shape: [n, n], role: out}
  - {name: idata, shape: [n, n], role: in, init: normal}
grid: ["n / 32", "n / 32"]
block: [32, 8]
bytes: 8 * n * n
flops: 0
*/
// odata = transpose of idata, both n x n and row-major (n a multiple of TILE_DIM, the width
// taken from the grid). The expert of the transpose_rows_loop lineage, in the spelling of
// the rows loop: the block is TILE_DIM x BLOCK_ROWS threads, x and y are the thread's
// column and first row in a TILE_DIM x TILE_DIM tile of the matrix, and each thread walks
// TILE_DIM / BLOCK_ROWS rows of its column, BLOCK_ROWS apart, in a loop. On top of it:
//   - the tile is staged in shared memory: the loop reads rows of idata into it (neighbouring
//     threads, neighbouring columns), a barrier, then x and y are assigned again with the
//     block indices swapped and a second loop writes rows of odata from the tile's columns,
//     so that neighbouring threads store neighbouring elements too;
//   - one column of padding ([TILE_DIM][TILE_DIM + 1]): a column of the tile spans all 32
//     banks instead of one.
#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transpose_rows_loop(float *odata, float *idata)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    int width = gridDim.x * TILE_DIM;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[x * width + (y + j)] = idata[(y + j) * width + x];
}
