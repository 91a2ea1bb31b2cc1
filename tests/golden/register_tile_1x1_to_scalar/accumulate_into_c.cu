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
grid: ["(N // BN) * 8", "(M // BM) * 8"]
block: ["(BM // TM) * (BN // TN)"]
bytes: 4 * (M * K + K * N + M * N)
flops: 2 * M * N * K
*/
// sgemm at step 37, made to accumulate into C (C += A B): the accumulator is used between
// its zeroing and the k loop, so it is not turned into a scalar
template <int BM, int BN, int BK, int TM, int TN>
__global__ void 
sgemm(float* A, float* B, float* C,
      int M, int N, int K) {
    const int ty = threadIdx.x / (BN / TN);
    const int tx = threadIdx.x % (BN / TN);
    const int row0 = blockIdx.y * (BM / TM);
    const int col0 = blockIdx.x * (BN / TN);
    float acc[1][1];
    {
        const int i = 0;
        {
            const int j = 0;
            acc[i][j] = 0.0f;
        }
    }
    acc[0][0] += C[(size_t)(row0 + ty) * N + col0 + tx];
    for (int k = 0; k < K; ++k) {
        {
            const int i = 0;
            {
                const int j = 0;
                acc[i][j] += A[(size_t)(row0 + (ty + i)) * K + k] * B[(size_t)k * N + col0 + (tx + j)];
            }
        }
    }
    {
        const int i = 0;
        {
            const int j = 0;
            C[(size_t)(row0 + ty + i) * N + col0 + tx + j] = acc[i][j];
        }
    }
}
