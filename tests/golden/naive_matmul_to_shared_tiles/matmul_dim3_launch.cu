// The block from a dim3 variable of the host function that launches the kernel (no spec),
// the edge a #define.
#define BLOCK_DIM 16
__global__ void mm(const float* A, const float* B, float* C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++) {
            sum += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = sum;
    }
}
void run(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(BLOCK_DIM, BLOCK_DIM);
    dim3 grid((N + BLOCK_DIM - 1) / BLOCK_DIM, (M + BLOCK_DIM - 1) / BLOCK_DIM);
    mm<<<grid, block>>>(A, B, C, M, N, K);
}
