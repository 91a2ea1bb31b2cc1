// 64-bit sizes and offsets, the block given by the launch in the same file (no spec),
// unsigned row and column, the check with the bound first.
#include <cuda_runtime.h>

#define BS 16

__global__ void sgemm_naive(size_t M, size_t N, size_t K, const float *a, const float *b,
                            float *c) {
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned int x = threadIdx.x + blockDim.x * blockIdx.x;
    __shared__ float As[16][16];
    __shared__ float Bs[16][16];
    float tmp = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        {
            const int i = k0 + threadIdx.x;
            As[threadIdx.y][threadIdx.x] = (y < M && i < K) ? a[(size_t)y * K + i] : 0.0f;
        }
        {
            const int i = k0 + threadIdx.y;
            Bs[threadIdx.y][threadIdx.x] = (i < K && x < N) ? b[(size_t)i * N + x] : 0.0f;
        }
        __syncthreads();
        for (int i = 0; i < 16; i++) {
            tmp += As[threadIdx.y][i] * Bs[i][threadIdx.x];
        }
        __syncthreads();
    }
    if (y < M && x < N) {
        c[(size_t)y * N + x] = 2.0f * tmp;
    }
}

void launch(size_t M, size_t N, size_t K, const float *a, const float *b, float *c) {
    dim3 grid((N + BS - 1) / BS, (M + BS - 1) / BS);
    sgemm_naive<<<grid, dim3(BS, BS)>>>(M, N, K, a, b, c);
}
