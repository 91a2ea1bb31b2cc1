// 64-bit sizes and offsets, the block given by the launch in the same file (no spec),
// unsigned row and column, the check with the bound first.
#include <cuda_runtime.h>

#define BS 16

__global__ void sgemm_naive(size_t M, size_t N, size_t K, const float *a, const float *b,
                            float *c) {
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned int x = threadIdx.x + blockDim.x * blockIdx.x;
    if (M > y && N > x) {
        float tmp = 0.0f;
        for (int i = 0; i < K; i++) {
            tmp += a[(size_t)y * K + i] * b[(size_t)i * N + x];
        }
        c[(size_t)y * N + x] = 2.0f * tmp;
    }
}

void launch(size_t M, size_t N, size_t K, const float *a, const float *b, float *c) {
    dim3 grid((N + BS - 1) / BS, (M + BS - 1) / BS);
    sgemm_naive<<<grid, dim3(BS, BS)>>>(M, N, K, a, b, c);
}
