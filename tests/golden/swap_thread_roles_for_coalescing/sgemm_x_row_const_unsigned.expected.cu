// A first-version product whose row comes from threadIdx.x, its indices `const unsigned`
// (each index keeps its own type), the grid and block one dim3 declaration of the launcher.
__global__ void gemm_x_rows(int M, int N, int K, const float* A, const float* B, float* C) {
    const unsigned int x = blockIdx.y * blockDim.y + threadIdx.y;
    const unsigned int y = blockIdx.x * blockDim.x + threadIdx.x;
    if (x < M && y < N) {
        float t = 0.0f;
        for (int i = 0; i < K; ++i) {
            t += A[x * K + i] * B[i * N + y];
        }
        C[x * N + y] = t;
    }
}
void launch_x_rows(int M, int N, int K, const float* A, const float* B, float* C) {
    dim3 grid((N + 31) / 32, (M + 31) / 32), block(32, 32);
    gemm_x_rows<<<grid, block>>>(M, N, K, A, B, C);
}
