// A 16 x 16 first version launched through dim3 variables sized by a #define: both
// variables are read by this launch alone, so their declarations take the new shape.
#define BLOCK_DIM 16
__global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
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
void matmul(const float* dA, const float* dB, float* dC, int M, int N, int K) {
    dim3 block(BLOCK_DIM, BLOCK_DIM);
    dim3 grid((N + BLOCK_DIM - 1) / BLOCK_DIM, (M + BLOCK_DIM - 1) / BLOCK_DIM);
    matmul_naive<<<grid, block>>>(dA, dB, dC, M, N, K);
}
