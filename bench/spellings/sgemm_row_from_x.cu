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
grid: ["ceil_div(M, 32)", "ceil_div(N, 32)"]
block: [32, 32]
bytes: 4 * (M * K + K * N + 2 * M * N)
flops: 2 * M * N * K
tolerance: {rtol: 0.001, atol: 0.001}
*/
// The first SGEMM of many tutorials: one thread per output, the row taken from threadIdx.x
// (lanes of a warp a row apart), `const unsigned` indices, C = alpha * A B + beta * C.
__global__ void gemm_scaled(int M, int N, int K, float alpha, const float *P,
                            const float *Q, float beta, float *R) {
    const unsigned row = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += P[row * K + k] * Q[k * N + col];
        }
        R[row * N + col] = alpha * acc + beta * R[row * N + col];
    }
}
