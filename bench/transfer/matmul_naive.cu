/* klc-spec
kernel: matmul_naive
sizes: {M: 2048, N: 2048, K: 2048}
verify_sizes:
  - {M: 128, N: 64, K: 256}
  - {M: 33, N: 47, K: 29}
  - {M: 1, N: 3, K: 2}
args:
  - {name: A, shape: [M, K], role: in, init: normal}
  - {name: B, shape: [K, N], role: in, init: normal}
  - {name: C, shape: [M, N], role: out}
  - {name: M, value: M}
  - {name: N, value: N}
  - {name: K, value: K}
grid: ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block: [16, 16]
bytes: 4 * M * K + 4 * K * N + 4 * M * N
flops: 2 * M * N * K
tolerance: {rtol: 0.0005, atol: 0.00001}
timeout_s: 240
*/
// family: gemm
// style: one thread per output, 2D grid, #define block edge, host main() with a dim3 launch and a CPU check
// C = A B, all row-major float32: A is M x K, B is K x N, C is M x N.
// bytes: each matrix once. flops: 2 M N K.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

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

int main() {
    int M = 512, N = 256, K = 384;
    float* hA = (float*)malloc(M * K * sizeof(float));
    float* hB = (float*)malloc(K * N * sizeof(float));
    float* hC = (float*)malloc(M * N * sizeof(float));
    for (int i = 0; i < M * K; i++) hA[i] = (float)rand() / RAND_MAX - 0.5f;
    for (int i = 0; i < K * N; i++) hB[i] = (float)rand() / RAND_MAX - 0.5f;
    float *dA, *dB, *dC;
    cudaMalloc(&dA, M * K * sizeof(float));
    cudaMalloc(&dB, K * N * sizeof(float));
    cudaMalloc(&dC, M * N * sizeof(float));
    cudaMemcpy(dA, hA, M * K * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dB, hB, K * N * sizeof(float), cudaMemcpyHostToDevice);
    dim3 block(BLOCK_DIM, BLOCK_DIM);
    dim3 grid((N + BLOCK_DIM - 1) / BLOCK_DIM, (M + BLOCK_DIM - 1) / BLOCK_DIM);
    matmul_naive<<<grid, block>>>(dA, dB, dC, M, N, K);
    cudaMemcpy(hC, dC, M * N * sizeof(float), cudaMemcpyDeviceToHost);
    double max_err = 0.0;
    for (int r = 0; r < M; r += 17) {
        for (int c = 0; c < N; c += 13) {
            double ref = 0.0;
            for (int k = 0; k < K; k++) ref += (double)hA[r * K + k] * hB[k * N + c];
            max_err = fmax(max_err, fabs(ref - hC[r * N + c]));
        }
    }
    printf("max abs error %g\n", max_err);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    free(hA);
    free(hB);
    free(hC);
    return 0;
}
