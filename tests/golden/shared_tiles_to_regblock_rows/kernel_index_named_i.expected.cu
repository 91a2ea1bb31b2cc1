/* klc-spec
kernel: sgemm_alpha_beta
sizes: {M: 1024, N: 768, K: 512}
verify_sizes:
  - {M: 33, N: 47, K: 29}
  - {M: 1, N: 3, K: 2}
args:
  - {name: M, value: M}
  - {name: N, value: N}
  - {name: K, value: K}
  - {name: alpha, value: 1.5}
  - {name: A, shape: [M, K], role: in, init: normal}
  - {name: B, shape: [K, N], role: in, init: normal}
  - {name: beta, value: 0.5}
  - {name: C, shape: [M, N], role: inout, init: normal}
grid: ["ceil_div(N, 32)", "ceil_div(M, 32)"]
block: [32, "ceil_div(32, 4)"]
bytes: 4 * M * K + 4 * K * N + 8 * M * N
flops: 2 * M * N * K
tolerance: {rtol: 0.0005, atol: 0.00001}
*/
// shared_tiles_to_regblock_rows case: naive_matmul_to_shared_tiles's output (tile 32) on an SGEMM
// with alpha/beta, locals between the indices and the product, a double accumulator and a loop
// index named i (the skill's own i takes a fresh name).
// A BLAS-style SGEMM, C = alpha A B + beta C, with the leading dimensions as locals declared
// between the indices and the bounds check, a double accumulator and the column index first.
#define BLOCK 32

__global__ void sgemm_alpha_beta(int M, int N, int K, float alpha, const float *A,
                                 const float *B, float beta, float *C) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int lda = K;
    const int ldb = N;
    __shared__ float As[32][32];
    __shared__ float Bs[32][32];
    double acc[4];
    for (int i_1 = 0; i_1 < 4; i_1++) {
        acc[i_1] = 0.0;
    }
    for (int k0 = 0; k0 < K; k0 += 32) {
        for (int i_1 = 0; i_1 < 4; i_1++) {
            const int r = y + i_1 * gridDim.y * blockDim.y;
            {
                const int y = r;
                const int i = k0 + threadIdx.x;
                As[threadIdx.y + i_1 * blockDim.y][threadIdx.x] = (y < M && i < K) ? A[y * lda + i] : 0.0f;
            }
        }
        for (int i_1 = 0; i_1 < 4; i_1++) {
            const int i = k0 + threadIdx.y + i_1 * blockDim.y;
            Bs[threadIdx.y + i_1 * blockDim.y][threadIdx.x] = (i < K && x < N) ? B[i * ldb + x] : 0.0f;
        }
        __syncthreads();
        for (int i = 0; i < 32; i++) {
            const float b = Bs[i][threadIdx.x];
            for (int i_1 = 0; i_1 < 4; i_1++) {
                acc[i_1] += As[threadIdx.y + i_1 * blockDim.y][i] * b;
            }
        }
        __syncthreads();
    }
    for (int i_1 = 0; i_1 < 4; i_1++) {
        const int r = y + i_1 * gridDim.y * blockDim.y;
        {
            const int y = r;
            if (y < M && x < N) {
                double tmp = acc[i_1];
                C[y * ldb + x] = alpha * (float)tmp + beta * C[y * ldb + x];
            }
        }
    }
}
