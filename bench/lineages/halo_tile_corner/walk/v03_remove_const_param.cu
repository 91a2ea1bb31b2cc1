/* klc-spec
kernel: convolution_2d
sizes: {N: 8192}
verify_sizes:
  - {N: 64}
  - {N: 37}
  - {N: 7}
  - {N: 5}
  - {N: 1}
args:
  - {name: matrix, shape: [N, N], role: in, init: "uniform(-1, 1)"}
  - {name: result, shape: [N, N], role: out}
  - {name: mask, shape: [49], role: in, init: "uniform(0, 1)"}
  - {name: N, value: N}
grid: ["ceil_div(N, 32)", "ceil_div(N, 8)"]
block: [32, 8]
bytes: 8 * N * N
flops: 98 * N * N
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// A 7 x 7 convolution of an N x N matrix (zero outside it) with a mask passed by pointer, the
// expert of the halo_tile_corner lineage, written in the spelling of course material: the
// window's top-left corner as start_r / start_c, the window walked by i, j from 0 to
// MASK_DIM, each row and column of it checked against the matrix in nested ifs. One
// optimization on top (README.md names the pass that removes it), on a 32 x 8 block (a square
// one would let the walk swap the thread roles first and measure the tile on uncoalesced code):
//   - the block stages its (8 + MASK_DIM - 1) x (32 + MASK_DIM - 1) tile of the matrix, its
//     own elements and the halo the windows of its threads reach (MASK_OFFSET rows and
//     columns before, MASK_DIM - 1 - MASK_OFFSET after), in shared memory, zeros outside
//     the matrix; after one barrier every thread reads its 49 elements from the tile
//     (tile[threadIdx.y + i][threadIdx.x + j] is the element (start_r + i, start_c + j)).
//     The checks stay: an element outside the matrix adds nothing, whatever the mask holds.
// Every thread loads its share of the tile before any leaves: the store is the last statement.
// bytes: matrix read once, result written once. flops: 49 multiply-adds per output.
#define MASK_DIM 7
#define MASK_OFFSET (MASK_DIM / 2)

__global__ void convolution_2d(float *matrix, float *result, float *mask, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int start_r = row - MASK_OFFSET;
    int start_c = col - MASK_OFFSET;
    float temp = 0.0f;
    for (int i = 0; i < MASK_DIM; i++) {
        for (int j = 0; j < MASK_DIM; j++) {
            if ((start_r + i) >= 0 && (start_r + i) < N) {
                if ((start_c + j) >= 0 && (start_c + j) < N) {
                    temp += matrix[(start_r + i) * N + (start_c + j)] * mask[i * MASK_DIM + j];
                }
            }
        }
    }
    if (row < N && col < N) {
        result[row * N + col] = temp;
    }
}
