/* klc-spec
kernel: matmul_tile32
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
grid: ["ceil_div(N, 32)", "ceil_div(M, 32)"]
block: [32, 4]
bytes: 4 * M * K + 4 * K * N + 4 * M * N
flops: 2 * M * N * K
tolerance: {rtol: 0.0005, atol: 0.00001}
timeout_s: 240
*/
// C = A B, all row-major float32: A is M x K, B is K x N, C is M x N, any sizes (none needs
// to be a multiple of the tile). The expert of the matmul_tile32 lineage: the shared-memory
// tiled product with register blocking along y at a 32 x 32 tile: the matmul_regblock
// expert's structure with TILE 32 and TM 8 (README.md says why this lineage exists):
//   - a TILE x (TILE / TM) block (32 x 4) computes TILE x TILE outputs: each thread TM = 8 of
//     them, one column and TM rows, with TM accumulators in registers. Thread (x, y) of block
//     (bx, by) keeps row = by * blockDim.y + y, the row the launch numbers, and its TM rows are
//     row + i * gridDim.y * blockDim.y (i < TM): the rows of C are dealt out to the grid's
//     thread rows TM times over, so the rows computed are exactly those of a TILE x TILE block
//     on the same grid, whatever the grid;
//   - the k dimension is walked TILE at a time: each thread copies TM elements of the A tile
//     (its TM rows, k0 + threadIdx.x) and TM of the B tile (k0 + threadIdx.y + i * blockDim.y,
//     its column) into __shared__ memory, the block waits, and each k of the tile reads B's
//     element once into a register and uses it for the TM products: half the shared-memory
//     loads per product of one output per thread, and an eighth of the threads to schedule;
//   - each of the thread's rows is declared again (`const int row = r;`) where it is used, so
//     the bounds checks, the loads and the output code read it by the name `row`;
//   - ragged sizes: a load outside the matrices writes 0 into the tile (it adds nothing), the
//     bounds check of each of the TM outputs comes after the tile loop, so that every thread
//     of the block reaches every __syncthreads;
//   - const inputs.
// bytes: each matrix once (the ideal). flops: 2 M N K.
#define TILE 32
#define TM 8

__global__ void matmul_tile32(float* A, const float* B, float* C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    float acc[TM];
    for (int i = 0; i < TM; i++) {
        acc[i] = 0.0f;
    }
    for (int k0 = 0; k0 < K; k0 += TILE) {
        for (int i = 0; i < TM; i++) {
            const int r = row + i * gridDim.y * blockDim.y;
            {
                const int row = r;
                const int k = k0 + threadIdx.x;
                As[threadIdx.y + i * blockDim.y][threadIdx.x] = (row < M && k < K) ? A[row * K + k] : 0.0f;
            }
        }
        for (int i = 0; i < TM; i++) {
            const int k = k0 + threadIdx.y + i * blockDim.y;
            Bs[threadIdx.y + i * blockDim.y][threadIdx.x] = (k < K && col < N) ? B[k * N + col] : 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < TILE; k++) {
            const float b = Bs[k][threadIdx.x];
            for (int i = 0; i < TM; i++) {
                acc[i] += As[threadIdx.y + i * blockDim.y][k] * b;
            }
        }
        __syncthreads();
    }
    for (int i = 0; i < TM; i++) {
        const int r = row + i * gridDim.y * blockDim.y;
        {
            const int row = r;
            if (row < M && col < N) {
                float sum = acc[i];
                C[row * N + col] = sum;
            }
        }
    }
}
