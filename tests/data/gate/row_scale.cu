/* klc-spec
kernel: row_scale
sizes: {N: 8192, C: 512}
args:
  - {name: x, shape: [N, C], role: in, init: normal}
  - {name: w, shape: [C], role: in, init: "uniform(0.5, 2)"}
  - {name: out, shape: [N, C], role: out}
  - {name: N, value: N}
  - {name: C, value: C}
grid: [N]
block: [128]
bytes: 8 * N * C + 4 * C
*/
// The reference: every row of x scaled by w, one block per row.
extern "C" __global__ void row_scale(const float* __restrict__ x, const float* __restrict__ w,
                                     float* __restrict__ out, int N, int C) {
    int row = blockIdx.x;
    if (row >= N) return;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        out[(size_t)row * C + c] = x[(size_t)row * C + c] * w[c];
    }
}
