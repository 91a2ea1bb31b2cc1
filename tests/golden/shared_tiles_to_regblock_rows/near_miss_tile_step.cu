/* klc-spec
kernel: matmul_tile
sizes: {M: 1024, N: 1024, K: 1024}
verify_sizes:
  - {M: 33, N: 47, K: 29}
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
*/
// shared_tiles_to_regblock_rows refusal: the row's step is the TILE_WIDTH constant, not
// blockDim.y: once the block is shorter the thread's rows would not be row + i * gridDim.y * blockDim.y.
// `T* x` spelling, the column declared before the row, a #define'd block edge as the
// step of the indices, a declaration between the indices and the check, a bare loop body.
#define TILE_WIDTH 16

__global__ void matmul_tile(const float* A, const float* B, float* C, int M, int N, int K) {
    const int col = blockIdx.x * TILE_WIDTH + threadIdx.x;
    const int row = blockIdx.y * TILE_WIDTH + threadIdx.y;
    const int lda = K;
    __shared__ float As[16][16];
    __shared__ float Bs[16][16];
    float value = 0;
    for (int k0 = 0; k0 < K; k0 += 16) {
        {
            const int k = k0 + threadIdx.x;
            As[threadIdx.y][threadIdx.x] = (row < M && k < K) ? A[row * lda + k] : 0.0f;
        }
        {
            const int k = k0 + threadIdx.y;
            Bs[threadIdx.y][threadIdx.x] = (k < K && col < N) ? B[k * N + col] : 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < 16; k++) {
            value += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        C[row * N + col] = value;
    }
}
