/* klc-spec
kernel: matmul_ret
sizes: {M: 1024, N: 1024, K: 1024}
args:
  - {name: A, shape: [M, K], role: in, init: normal}
  - {name: B, shape: [K, N], role: in, init: normal}
  - {name: C, shape: [M, N], role: out}
  - {name: flags, shape: [M], role: in, init: "randint(0, 2)"}
  - {name: M, value: M}
  - {name: N, value: N}
  - {name: K, value: K}
grid: ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block: [16, 16]
bytes: 4 * M * K + 4 * K * N + 4 * M * N
flops: 2 * M * N * K
*/
// A near miss: rows whose flag is 0 leave before the product (a thread-dependent return):
// those threads would never reach the tile loop's __syncthreads. Not rewritten.
__global__ void matmul_ret(const float* A, const float* B, float* C, const int* flags,
                           int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && flags[row] == 0) return;
    if (row < M && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++) {
            sum += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = sum;
    }
}
