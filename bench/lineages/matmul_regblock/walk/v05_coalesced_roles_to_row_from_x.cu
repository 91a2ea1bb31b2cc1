/* klc-spec
kernel: matmul_regblock
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
grid: ["ceil_div(M, 16)", "ceil_div(N, 16)"]
block: [16, "(4) * 4"]
bytes: 4 * M * K + 4 * K * N + 4 * M * N
flops: 2 * M * N * K
tolerance: {rtol: 0.0005, atol: 0.00001}
timeout_s: 240
*/
// C = A B, all row-major float32: A is M x K, B is K x N, C is M x N, any sizes (none needs
// to be a multiple of the tile). The expert of the matmul_regblock lineage: the shared-memory
// tiled product with register blocking along y, the step after one output per thread
// (README.md names the pass that removes it):
//   - a TILE x (TILE / TM) block (16 x 4) computes TILE x TILE outputs: each thread TM = 4 of
//     them, one column and TM rows, with TM accumulators in registers. Thread (x, y) of block
//     (bx, by) keeps row = by * blockDim.y + y, the row the launch numbers, and its TM rows are
//     row + i * gridDim.y * blockDim.y (i < TM): the rows of C are dealt out to the grid's
//     thread rows TM times over, so the rows computed are exactly those of a TILE x TILE block
//     on the same grid, whatever the grid;
//   - the k dimension is walked TILE at a time: each thread copies TM elements of the A tile
//     (its TM rows, k0 + threadIdx.x) and TM of the B tile (k0 + threadIdx.y + i * blockDim.y,
//     its column) into __shared__ memory, the block waits, and each k of the tile reads B's
//     element once into a register and uses it for the TM products: half the shared-memory
//     loads per product of one output per thread, and a quarter of the threads to schedule;
//   - each of the thread's rows is declared again (`const int row = r;`) where it is used, so
//     the bounds checks, the loads and the output code read it by the name `row`;
//   - ragged sizes: a load outside the matrices writes 0 into the tile (it adds nothing), the
//     bounds check of each of the TM outputs comes after the tile loop, so that every thread
//     of the block reaches every __syncthreads;
//   - const inputs.
// bytes: each matrix once (the ideal). flops: 2 M N K.
#define TILE 16
#define TM 4

__global__ void matmul_regblock(float* A, float* B, float* C, int M, int N, int K) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++) {
            sum += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = sum;
    }
}
