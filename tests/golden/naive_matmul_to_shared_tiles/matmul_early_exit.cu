/* klc-spec
kernel: gemm_early_exit
sizes: {M: 1000, N: 1000, K: 1000}
args:
  - {name: out, shape: [M, N], role: out}
  - {name: a, shape: [M, K], role: in, init: normal}
  - {name: b, shape: [K, N], role: in, init: normal}
  - {name: M, value: M}
  - {name: N, value: N}
  - {name: K, value: K}
grid: ["ceil_div(N, 32)", "ceil_div(M, 32)"]
block: [32, 32]
bytes: 4 * M * K + 4 * K * N + 4 * M * N
flops: 2 * M * N * K
*/
// A first-version product whose threads outside the matrix leave at once (an early return
// with both bounds in one ||; sizes that are not multiples of the tile), launched by a
// host function whose grid and block are one dim3 declaration.
__global__ void gemm_early_exit(float* out, const float* a, const float* b, int M, int N,
                                int K) {
    int r = threadIdx.y + blockIdx.y * blockDim.y;
    int c = threadIdx.x + blockIdx.x * blockDim.x;
    if (r >= M || c >= N) {
        return;
    }
    float s = 0.f;
    for (int i = 0; i < K; ++i) {
        s += a[r * K + i] * b[i * N + c];
    }
    out[r * N + c] = s;
}
void run_early_exit(float* out, const float* a, const float* b, int M, int N, int K) {
    dim3 grid((N + 31) / 32, (M + 31) / 32), block(32, 32);
    gemm_early_exit<<<grid, block>>>(out, a, b, M, N, K);
}
