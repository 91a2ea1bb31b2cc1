// A 32 x 8 block: a square tile of either extent would leave threads without a tile element
// (or elements without a thread). Refused, naming the extent the site has.
__global__ void mm(const float* A, const float* B, float* C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) {
            acc += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = acc;
    }
}
void run(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 threads(32, 8);
    dim3 blocks((N + 31) / 32, (M + 7) / 8);
    mm<<<blocks, threads>>>(A, B, C, M, N, K);
}
