/* klc-spec
kernel: sgemm
template: {BM: 128, BN: 128, BK: 8, TM: 8, TN: 8}
sizes: {M: 4096, N: 4096, K: 4096}
verify_sizes:
  - {M: 256, N: 256, K: 256}
  - {M: 384, N: 128, K: 72}
  - {M: 128, N: 384, K: 8}
args:
  - {name: A, shape: [M, K], role: in}
  - {name: B, shape: [K, N], role: in}
  - {name: C, shape: [M, N], role: out}
  - {name: M, value: M}
  - {name: N, value: N}
  - {name: K, value: K}
grid: ["N // BN", "M // BM"]
block: ["(BM // TM) * (BN // TN)"]
bytes: 4 * (M * K + K * N + M * N)
flops: 2 * M * N * K
*/
// C (M x N) = A (M x K) * B (K x N), all row-major fp32; M a multiple of BM, N of BN, K of
// BK. The expert of the sgemm lineage; each optimization is one separable code shape
// (README.md names the pass that removes it):
//   - __launch_bounds__, a templated tile shape (constant loop bounds, #pragma unroll);
//   - const __restrict__ inputs;
//   - block tiles of A (BM x BK, stored transposed) and B (BK x BN) in shared memory;
//   - 2D register blocking: each thread accumulates a TM x TN block of C from TM values of
//     A and TN values of B per k (outer products);
//   - 128-bit accesses: float4 global loads of A and B, float4 shared stores of B and
//     float4 shared reads of the A and B fragments, float4 stores of C;
//   - double buffering: two shared buffers, one __syncthreads per k-step (the next tile is
//     stored into the other buffer while slow warps still read this one);
//   - register prefetch: the global loads of the next tile are issued before the current
//     tile's arithmetic and land in registers, hiding their latency behind it.
template <int BM, int BN, int BK, int TM, int TN>
__global__ void 
sgemm(float* A, float* B, float* C,
      int M, int N, int K) {
    static_assert(BM * BK == 4 * (BM / TM) * (BN / TN), "one float4 of A per thread per tile");
    static_assert(BK * BN == 4 * (BM / TM) * (BN / TN), "one float4 of B per thread per tile");
    static_assert(BK % 4 == 0 && TM % 4 == 0 && TN % 4 == 0, "tiles are moved as float4");
    __shared__ __align__(16) float As[2][BK][BM];
    __shared__ __align__(16) float Bs[2][BK][BN];
    const int ty = threadIdx.x / (BN / TN);
    const int tx = threadIdx.x % (BN / TN);
    const int a_row = threadIdx.x / (BK / 4);
    const int a_col = threadIdx.x % (BK / 4) * 4;
    const int b_row = threadIdx.x / (BN / 4);
    const int b_col = threadIdx.x % (BN / 4) * 4;
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;
    float acc[TM][TN];
    for (int i = 0; i < TM; ++i) {
        for (int j = 0; j < TN; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    float4 a_ld;
    float4 b_ld;
    int buf = 0;
    for (int k0 = 0; k0 < K; k0 += BK) {
        {
            const int kn = k0;
            a_ld = make_float4(A[4 * (((size_t)(row0 + a_row) * K + kn + a_col) / 4) + 0], A[4 * (((size_t)(row0 + a_row) * K + kn + a_col) / 4) + 1], A[4 * (((size_t)(row0 + a_row) * K + kn + a_col) / 4) + 2], A[4 * (((size_t)(row0 + a_row) * K + kn + a_col) / 4) + 3]);
            b_ld = make_float4(B[4 * (((size_t)(kn + b_row) * N + col0 + b_col) / 4) + 0], B[4 * (((size_t)(kn + b_row) * N + col0 + b_col) / 4) + 1], B[4 * (((size_t)(kn + b_row) * N + col0 + b_col) / 4) + 2], B[4 * (((size_t)(kn + b_row) * N + col0 + b_col) / 4) + 3]);
        }
        As[buf][a_col + 0][a_row] = a_ld.x;
        As[buf][a_col + 1][a_row] = a_ld.y;
        As[buf][a_col + 2][a_row] = a_ld.z;
        As[buf][a_col + 3][a_row] = a_ld.w;
        {
            Bs[buf][b_row][b_col] = b_ld.x;
            Bs[buf][b_row][(b_col) + 1] = b_ld.y;
            Bs[buf][b_row][(b_col) + 2] = b_ld.z;
            Bs[buf][b_row][(b_col) + 3] = b_ld.w;
        }
        __syncthreads();
        for (int k = 0; k < BK; ++k) {
            for (int i = 0; i < TM; ++i) {
                for (int j = 0; j < TN; ++j) {
                    acc[i][j] += As[buf][k][ty * TM + i] * Bs[buf][k][tx * TN + j];
                }
            }
        }
        __syncthreads();
    }
    for (int i = 0; i < TM; ++i) {
        const size_t o = (size_t)(row0 + ty * TM + i) * N + col0 + tx * TN;
        for (int j = 0; j < TN; ++j) {
            C[o + j] = acc[i][j];
        }
    }
}
