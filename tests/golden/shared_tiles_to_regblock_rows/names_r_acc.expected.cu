/* klc-spec
kernel: matmul_names
sizes: {M: 1000, N: 600, K: 300}
verify_sizes:
  - {M: 33, N: 47, K: 29}
args:
  - {name: a, shape: [M, K], role: in, init: normal}
  - {name: b, shape: [K, N], role: in, init: normal}
  - {name: c, shape: [M, N], role: out}
  - {name: M, value: M}
  - {name: N, value: N}
  - {name: K, value: K}
grid: ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block: [16, "ceil_div(16, 4)"]
bytes: 4 * M * K + 4 * K * N + 4 * M * N
flops: 2 * M * N * K
*/
// shared_tiles_to_regblock_rows case: naive_matmul_to_shared_tiles's output on a product with
// `T *x` spelling, the row named r, the sum acc and parameter b: the names the skill's own
// variables take by default, so they take fresh ones (r_1, acc_1, i_1, b_1).
__global__ void matmul_names(const float *a, const float *b, float *c, int M, int N,
                                    int K) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int cc = blockIdx.x * blockDim.x + threadIdx.x;
    __shared__ float As[16][16];
    __shared__ float Bs[16][16];
    float acc_1[4];
    for (int i_1 = 0; i_1 < 4; i_1++) {
        acc_1[i_1] = 0.0f;
    }
    for (int k0 = 0; k0 < K; k0 += 16) {
        for (int i_1 = 0; i_1 < 4; i_1++) {
            const int r_1 = r + i_1 * gridDim.y * blockDim.y;
            {
                const int r = r_1;
                const int i = k0 + threadIdx.x;
                As[threadIdx.y + i_1 * blockDim.y][threadIdx.x] = (r < M && i < K) ? a[r * K + i] : 0.0f;
            }
        }
        for (int i_1 = 0; i_1 < 4; i_1++) {
            const int i = k0 + threadIdx.y + i_1 * blockDim.y;
            Bs[threadIdx.y + i_1 * blockDim.y][threadIdx.x] = (i < K && cc < N) ? b[i * N + cc] : 0.0f;
        }
        __syncthreads();
        for (int i = 0; i < 16; i++) {
            const float b_1 = Bs[i][threadIdx.x];
            for (int i_1 = 0; i_1 < 4; i_1++) {
                acc_1[i_1] += As[threadIdx.y + i_1 * blockDim.y][i] * b_1;
            }
        }
        __syncthreads();
    }
    for (int i_1 = 0; i_1 < 4; i_1++) {
        const int r_1 = r + i_1 * gridDim.y * blockDim.y;
        {
            const int r = r_1;
            if (r < M && cc < N) {
                float acc = acc_1[i_1];
                c[r * N + cc] = acc;
            }
        }
    }
}
