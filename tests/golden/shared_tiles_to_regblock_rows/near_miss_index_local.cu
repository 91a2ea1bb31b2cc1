/* klc-spec
kernel: matmul_idx
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
// The output's offset is a local computed from the row before the product: a rewrite that
// declares the row again for each of a thread's rows would leave it at the first row.
__global__ void matmul_idx(float* A, float* B, float* C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int idx = row * N + col;
    __shared__ float As[16][16];
    __shared__ float Bs[16][16];
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        {
            const int k = k0 + threadIdx.x;
            As[threadIdx.y][threadIdx.x] = (row < M && k < K) ? A[row * K + k] : 0.0f;
        }
        {
            const int k = k0 + threadIdx.y;
            Bs[threadIdx.y][threadIdx.x] = (k < K && col < N) ? B[k * N + col] : 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < 16; k++) {
            sum += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        C[idx] = sum;
    }
}
