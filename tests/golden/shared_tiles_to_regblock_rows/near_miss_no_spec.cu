// shared_tiles_to_regblock_rows refusal: the block is known only from the host launch, which a
// launch edit never changes: the kernel would run on its old block.
// The block from a dim3 variable of the host function that launches the kernel (no spec),
// the edge a #define.
#define BLOCK_DIM 16
__global__ void mm(const float* A, const float* B, float* C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
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
void run(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(BLOCK_DIM, BLOCK_DIM);
    dim3 grid((N + BLOCK_DIM - 1) / BLOCK_DIM, (M + BLOCK_DIM - 1) / BLOCK_DIM);
    mm<<<grid, block>>>(A, B, C, M, N, K);
}
