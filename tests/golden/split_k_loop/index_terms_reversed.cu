// The row of A addressed k-first (k + row * K), the k step as k += 1.
#define TM 4
#define TN 4
__global__ void gemm_index_terms_reversed(const float* A, const float* B, float* C, int M, int N, int K) {
    const int tx = threadIdx.x % 16;
    const int ty = threadIdx.x / 16;
    const int row0 = blockIdx.y * 64;
    const int col0 = blockIdx.x * 64;
    float acc[TM][TN] = {};
    for (int k = 0; k < K; k += 1) {
        for (int i = 0; i < TM; i++) {
            for (int j = 0; j < TN; j++) {
                acc[i][j] += A[k + (row0 + ty * TM + i) * K] * B[(size_t)k * N + col0 + (tx * TN + j)];
            }
        }
    }
    for (int i = 0; i < TM; i++)
        for (int j = 0; j < TN; j++)
            C[(size_t)(row0 + ty * TM + i) * N + col0 + tx * TN + j] = acc[i][j];
}
