/* klc-spec
kernel: batched_transpose_tiled
template: {TILE: 16}
sizes: {N: 32, C: 64, HW: 16384}
verify_sizes:
  - {N: 2, C: 8, HW: 256}
  - {N: 1, C: 3, HW: 221}
  - {N: 3, C: 37, HW: 5}
  - {N: 1, C: 1, HW: 3}
args:
  - {name: src, shape: [N, C, HW], role: in, init: normal}
  - {name: dst, shape: [N, HW, C], role: out}
  - {name: N, value: N}
  - {name: C, value: C}
  - {name: HW, value: HW}
grid: ["ceil_div(HW, TILE * TILE)", C, N]
block: [TILE, TILE]
bytes: 8 * N * C * HW
flops: 0
*/
// dst[n][p][c] = src[n][c][p]: each batch slice n (blockIdx.z) of src, C rows of HW columns
// (NCHW with HW = H * W), is transposed into dst (NHWC). The expert of the batched_transpose
// lineage, written on the launch of the naive kernel people write first (one thread per
// element, a 1-D block of TILE * TILE threads over the columns, the row from blockIdx.y, the
// batch from blockIdx.z: grid [ceil_div(HW, TILE * TILE), C, N]) with two optimizations on
// top (README.md names the pass that removes each):
//   - the block is TILE x TILE and stages TILE x TILE tiles in shared memory: it reads TILE
//     rows of TILE consecutive columns of src (consecutive threads, consecutive columns),
//     waits at a barrier, and writes TILE rows of TILE consecutive channels of dst from the
//     tile's columns (the thread indices swap roles), so both phases are coalesced (the
//     naive store strides by C elements between neighbouring threads);
//   - one column of padding ([TILE][TILE + 1]): a tile column spans all banks.
// The grid stays the naive one: the TILE blocks blockIdx.y = row0 .. row0 + TILE - 1 (row0 a
// multiple of TILE) share the rows row0 .. row0 + TILE - 1, and between them the TILE tiles of
// TILE columns that the naive block blockIdx.x covers (TILE * TILE columns): block row0 + o
// takes the tiles o, o + group_blocks, ... where group_blocks is the number of blocks of its
// group (TILE, or fewer in the last group when C is not a multiple of TILE). Every row c < gridDim.y and
// column p < HW is copied once, as in the naive kernel; every thread of a block runs the
// same iterations, so all reach both barriers. Both phases compute the same offsets (the
// naive kernel's declarations, each phase with its own p and c); each uses one of them.
template <int TILE>
__global__ void batched_transpose_tiled(const float* src, float* dst, int N, int C, int HW) {
    __shared__ float tile[TILE][TILE + 1];
    int row0 = blockIdx.y / TILE * TILE;
    int group_blocks = min(TILE, (int)gridDim.y - row0);
    for (int sub = blockIdx.y - row0; sub < TILE; sub += group_blocks) {
        {
            int p = (blockIdx.x * TILE + sub) * TILE + threadIdx.x;
            int c = row0 + threadIdx.y;
            int n = blockIdx.z;
            if (p < HW && c < gridDim.y) {
                size_t in_off = ((size_t)n * C + c) * HW + p;
                size_t out_off = ((size_t)n * HW + p) * C + c;
                tile[threadIdx.y][threadIdx.x] = src[in_off];
            }
        }
        __syncthreads();
        {
            int p = (blockIdx.x * TILE + sub) * TILE + threadIdx.y;
            int c = row0 + threadIdx.x;
            int n = blockIdx.z;
            if (p < HW && c < gridDim.y) {
                size_t in_off = ((size_t)n * C + c) * HW + p;
                size_t out_off = ((size_t)n * HW + p) * C + c;
                dst[out_off] = tile[threadIdx.x][threadIdx.y];
            }
        }
        __syncthreads();
    }
}
