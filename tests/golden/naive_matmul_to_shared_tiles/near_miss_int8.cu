// An int8 product accumulated in int: the skill's tiles are float tiles (`__shared__ float`,
// zero as 0.0f), so a char A is refused rather than widened silently.
__global__ void gemm_s8(const signed char* A, const signed char* B, int* C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        int acc = 0;
        for (int k = 0; k < K; k++) {
            acc += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = acc;
    }
}
void run(const signed char* A, const signed char* B, int* C, int M, int N, int K) {
    gemm_s8<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16)>>>(A, B, C, M, N, K);
}
