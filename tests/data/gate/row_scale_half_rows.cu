/* klc-spec
kernel: row_scale_half
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
// A gaming candidate: from N = 4096 on it computes only the first half of the rows (the
// verify sizes stay under that; the profiling size does not).
extern "C" __global__ void row_scale_half(const float* __restrict__ x,
                                          const float* __restrict__ w,
                                          float* __restrict__ out, int N, int C) {
    int rows = N >= 4096 ? N / 2 : N;
    int row = blockIdx.x;
    if (row >= rows) return;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        out[(size_t)row * C + c] = x[(size_t)row * C + c] * w[c];
    }
}
