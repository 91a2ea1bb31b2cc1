/* klc-spec
kernel: sgemm_rows
sizes: {M: 2048, N: 2048, K: 1024}
verify_sizes:
  - {M: 128, N: 96, K: 64}
  - {M: 45, N: 37, K: 19}
  - {M: 1, N: 3, K: 2}
args:
  - {name: M, value: M}
  - {name: N, value: N}
  - {name: K, value: K}
  - {name: alpha, value: 1.5}
  - {name: A, shape: [M, K], role: in, init: normal}
  - {name: B, shape: [K, N], role: in, init: normal}
  - {name: beta, value: 0.5}
  - {name: C, shape: [M, N], role: inout, init: normal}
grid: ["ceil_div(N, 32)", "ceil_div(M, 32)"]
block: [32, 32]
bytes: 4 * M * K + 4 * K * N + 8 * M * N
flops: 2 * M * N * K + 3 * M * N
tolerance: {rtol: 0.0005, atol: 0.00001}
timeout_s: 240
*/
// C = alpha * A B + beta * C, row-major float32 (A is M x K, B is K x N, C is M x N), one
// thread per element of C, BLAS-like arguments (sizes first, alpha, A, B, beta, C). The
// expert of the coalesce_rows lineage (README.md): the row comes from the y thread and
// block indices and the column from the x ones, so that the 32 lanes of a warp (consecutive
// threadIdx.x) read 32 neighbouring elements of B's row k and write 32 neighbouring
// elements of C, one 128-byte transaction each, while A's element is the same for the whole
// warp (a broadcast). The naive end gives the row to threadIdx.x: every lane of a warp then
// reads its own row of A and writes its own row of C, a row length apart.
// bytes: A, B once, C read and written. flops: the product, the scale and the sum.
#define BS 32

__global__ void sgemm_rows(int M, int N, int K, float alpha, float* A, float* B,
                           float beta, float* C) {
    int row = blockIdx.y * BS + threadIdx.y;
    int col = blockIdx.x * BS + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = alpha * acc + beta * C[row * N + col];
    }
}
