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
    __shared__ float As[32][32];
    __shared__ float Bs[32][32];
    float s = 0.f;
    for (int k0 = 0; k0 < K; k0 += 32) {
        {
            const int i = k0 + threadIdx.x;
            As[threadIdx.y][threadIdx.x] = (r < M && i < K) ? a[r * K + i] : 0.0f;
        }
        {
            const int i = k0 + threadIdx.y;
            Bs[threadIdx.y][threadIdx.x] = (i < K && c < N) ? b[i * N + c] : 0.0f;
        }
        __syncthreads();
        for (int i = 0; i < 32; i++) {
            s += As[threadIdx.y][i] * Bs[i][threadIdx.x];
        }
        __syncthreads();
    }
    if (r < M && c < N) {
        out[r * N + c] = s;
    }
}
void run_early_exit(float* out, const float* a, const float* b, int M, int N, int K) {
    dim3 grid((N + 31) / 32, (M + 31) / 32), block(32, 32);
    gemm_early_exit<<<grid, block>>>(out, a, b, M, N, K);
}
