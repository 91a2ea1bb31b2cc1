/* klc-spec
kernel: matmul_tiled
sizes: {M: 2048, N: 2048, K: 2048}
verify_sizes:
  - {M: 128, N: 64, K: 256}
  - {M: 33, N: 47, K: 29}
  - {M: 1, N: 3, K: 2}
args:
  - {name: A, shape: [M, K], role: in, init: normal}
  - {name: B, shape: [K, N], role: in, init: normal}
  - {name: C, shape: [M, N], role: out}
  - {name: M, value: M}
  - {name: N, value: N}
  - {name: K, value: K}
grid: ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block: [16, 16]
bytes: 4 * M * K + 4 * K * N + 4 * M * N
flops: 2 * M * N * K
tolerance: {rtol: 0.0005, atol: 0.00001}
timeout_s: 240
*/
// An `unsigned int` row: the rows the rewrite declares are `const unsigned int` (the row's own
// type, ?rt), so that `row < M` still compares unsigned and `row * K + k` indexes unsigned.
// C = A B, all row-major float32: A is M x K, B is K x N, C is M x N, any sizes (none needs
// to be a multiple of the tile). The expert of the matmul_tiled lineage: the classic
// shared-memory tiled product, the first big step up from one thread per output reading its
// row of A and its column of B from global memory (README.md names the pass that removes
// it):
//   - a TILE x TILE block computes a TILE x TILE tile of C, one output per thread (row from
//     blockIdx.y / threadIdx.y, column from blockIdx.x / threadIdx.x);
//   - the k dimension is walked TILE at a time: each thread copies one element of the A tile
//     (its row, k0 + threadIdx.x) and one of the B tile (k0 + threadIdx.y, its column) into
//     __shared__ memory, the block waits, every thread accumulates its TILE products from
//     the tiles, and the block waits again before the next copy; each element of A and B
//     is then read from global memory once per block instead of once per thread (TILE
//     times fewer global loads);
//   - ragged sizes: a load outside the matrices writes 0 into the tile (it adds nothing),
//     and the bounds check of the output comes after the tile loop, so that every thread
//     of the block reaches every __syncthreads;
//   - const inputs.
// bytes: each matrix once (the ideal). flops: 2 M N K.
#define TILE 16

__global__ void matmul_tiled(float* A, float* B, float* C, int M, int N, int K) {
    unsigned int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    __shared__ float As[16][16];
    __shared__ float Bs[16][16];
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        {
            const int k = k0 + threadIdx.x;
            As[threadIdx.y][threadIdx.x] = (row < M && k < K) ? A[row * K + k] : 0.0f;
        }
        {
            const int k = k0 + threadIdx.y;
            Bs[threadIdx.y][threadIdx.x] = (k < K && col < N) ? B[k * N + col] : 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < 16; k++) {
            sum += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        C[row * N + col] = sum;
    }
}
