/* klc-spec
kernel: matmul_colfirst
sizes: {M: 1024, N: 1024, K: 1024}
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
*/
// Not rewritten (a limitation, not a near miss): the bounds check names the column first,
// and the anchor binds its first operand as the row (the guard then refuses: `col` is not the y index).
__global__ void matmul_colfirst(const float* A, const float* B, float* C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < N && row < M) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++) {
            sum += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = sum;
    }
}
