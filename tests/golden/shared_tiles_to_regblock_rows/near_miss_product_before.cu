/* klc-spec
kernel: mm2
sizes: {M: 64, N: 64, K: 64}
args:
  - {name: A, shape: [M, K], role: in, init: normal}
  - {name: B, shape: [K, N], role: in, init: normal}
  - {name: E, shape: [K, N], role: in, init: normal}
  - {name: C, shape: [M, N], role: out}
  - {name: D, shape: [M, N], role: out}
  - {name: M, value: M}
  - {name: N, value: N}
  - {name: K, value: K}
grid: ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block: [16, 16]
bytes: 1
flops: 1
*/
// shared_tiles_to_regblock_rows refusal: the code before the tiled product stores (a first
// product): a smaller block would run it for fewer threads.
// Two products in one kernel: only the one that ends the kernel is a site (kernel_tail), so
// the tiles are declared once; the first stays as it is.
__global__ void mm2(const float* A, const float* B, const float* E, float* C, float* D, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++) {
            sum += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = sum;
    }
    __shared__ float As[16][16];
    __shared__ float Bs[16][16];
    float sum2 = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        {
            const int k = k0 + threadIdx.x;
            As[threadIdx.y][threadIdx.x] = (row < M && k < K) ? A[row * K + k] : 0.0f;
        }
        {
            const int k = k0 + threadIdx.y;
            Bs[threadIdx.y][threadIdx.x] = (k < K && col < N) ? E[k * N + col] : 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < 16; k++) {
            sum2 += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        D[row * N + col] = sum2;
    }
}
