/* klc-spec
kernel: matmul_x_row
sizes: {M: 2048, N: 2048, K: 1024}
verify_sizes:
  - {M: 128, N: 96, K: 64}
  - {M: 45, N: 37, K: 19}
args:
  - {name: A, shape: [M, K], role: in, init: normal}
  - {name: B, shape: [K, N], role: in, init: normal}
  - {name: C, shape: [M, N], role: out}
  - {name: M, value: M}
  - {name: N, value: N}
  - {name: K, value: K}
grid: ["ceil_div(N, 32)", "ceil_div(M, 32)"]
block: [32, 32]
bytes: 4 * M * K + 4 * K * N + 4 * M * N
flops: 2 * M * N * K
tolerance: {rtol: 0.0005, atol: 0.00001}
*/
// C = A B, one thread per element of C; the row of C from the x thread index.
__global__ void matmul_x_row(const float* A, const float* B, float* C, int M, int N, int K) {
    const int x = blockIdx.y * blockDim.y + threadIdx.y;
    const int y = blockIdx.x * blockDim.x + threadIdx.x;
    if (x < M && y < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[x * K + k] * B[k * N + y];
        }
        C[x * N + y] = acc;
    }
}
