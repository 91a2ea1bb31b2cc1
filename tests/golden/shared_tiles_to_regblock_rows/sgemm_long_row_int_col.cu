/* klc-spec
kernel: gemm_scaled
sizes: {M: 2048, N: 2048, K: 2048}
verify_sizes:
  - {M: 33, N: 65, K: 17}
  - {M: 128, N: 96, K: 64}
args:
  - {name: M, value: M}
  - {name: N, value: N}
  - {name: K, value: K}
  - {name: alpha, value: 1.5}
  - {name: P, shape: [M, K], role: in, init: normal}
  - {name: Q, shape: [K, N], role: in, init: normal}
  - {name: beta, value: 0.5}
  - {name: R, shape: [M, N], role: inout, init: normal}
grid: ["ceil_div(N, 32)", "ceil_div(M, 32)"]
block: [32, 32]
bytes: 4 * (M * K + K * N + 2 * M * N)
flops: 2 * M * N * K
tolerance: {rtol: 0.001, atol: 0.001}
*/
// A `long` row beside an `int` column: the rows are `long`, the column keeps its type.
__global__ void gemm_scaled(int M, int N, int K, float alpha, const float *P,
                            const float *Q, float beta, float *R) {
    const long row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    __shared__ float As[32][32];
    __shared__ float Bs[32][32];
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 32) {
        {
            const int k = k0 + threadIdx.x;
            As[threadIdx.y][threadIdx.x] = (row < M && k < K) ? P[row * K + k] : 0.0f;
        }
        {
            const int k = k0 + threadIdx.y;
            Bs[threadIdx.y][threadIdx.x] = (k < K && col < N) ? Q[k * N + col] : 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < 32; k++) {
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        R[row * N + col] = alpha * acc + beta * R[row * N + col];
    }
}
