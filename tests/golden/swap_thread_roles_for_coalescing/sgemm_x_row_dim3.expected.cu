// The first SGEMM many people write: x (from threadIdx.x) is the row of C, y the column, so
// the 32 lanes of a warp read 32 rows of A and write 32 rows of C. A CEIL_DIV macro and dim3
// variables in the host function: the grid's two arguments trade places there.
#define CEIL_DIV(M, N) (((M) + (N) - 1) / (N))

__global__ void sgemm_naive(int M, int N, int K, float alpha, const float *A, const float *B,
                            float beta, float *C) {
    int x = blockIdx.y * blockDim.y + threadIdx.y;
    int y = blockIdx.x * blockDim.x + threadIdx.x;
    if (x < M && y < N) {
        float tmp = 0.0;
        for (int i = 0; i < K; ++i) {
            tmp += A[x * K + i] * B[i * N + y];
        }
        C[x * N + y] = alpha * tmp + beta * C[x * N + y];
    }
}

void run_sgemm_naive(int M, int N, int K, float alpha, float *A, float *B, float beta, float *C) {
    dim3 gridDim(CEIL_DIV(N, 32), CEIL_DIV(M, 32));
    dim3 blockDim(32, 32);
    sgemm_naive<<<gridDim, blockDim>>>(M, N, K, alpha, A, B, beta, C);
}
