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
// The block's first row and column declared `const unsigned` and `const size_t`: the rewrite
// keeps each declaration's type.
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
    const int ty = threadIdx.x / (BN / TN);
    const int tx = threadIdx.x % (BN / TN);
    const unsigned row0 = blockIdx.y * BM;
    const size_t col0 = blockIdx.x * BN;
    float acc[TM][TN];
    for (int i = 0; i < TM; ++i) {
        for (int j = 0; j < TN; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    for (int k = 0; k < K; ++k) {
        for (int i = 0; i < TM; ++i) {
            for (int j = 0; j < TN; ++j) {
                acc[i][j] += A[(size_t)(row0 + (ty * TM + i)) * K + k] * B[(size_t)k * N + col0 + (tx * TN + j)];
            }
        }
    }
    for (int i = 0; i < TM; ++i) {
        for (int j = 0; j < TN; ++j) {
            C[(size_t)(row0 + ty * TM + i) * N + col0 + tx * TN + j] = acc[i][j];
        }
    }
}
