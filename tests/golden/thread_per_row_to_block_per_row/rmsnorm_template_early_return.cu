/* klc-spec
kernel: rmsnorm_rows
template: {T: float}
sizes: {N: 1024, C: 8192}
verify_sizes:
  - {N: 64, C: 4096}
  - {N: 7, C: 999}
  - {N: 3, C: 1}
args:
  - {name: out, shape: [N, C], role: out}
  - {name: inp, shape: [N, C], role: in, init: normal}
  - {name: weight, shape: [C], role: in, init: normal}
  - {name: N, value: N}
  - {name: C, value: C}
grid: ["ceil_div(N, 128)"]
block: [128]
bytes: 8 * N * C + 4 * C
flops: 4 * N * C
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 120
*/
// RMS norm of wide rows, one thread per row, templated; the threads past the last row leave
// at once; `T *x` spelling; a 64-bit row offset.
template <typename T>
__global__ void rmsnorm_rows(T *out, const T *inp, const T *weight, int N, int C) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= N) return;
    const T *x = inp + (size_t)row * C;
    T *o = out + (size_t)row * C;
    float ss = 0.0f;
    for (int i = 0; i < C; ++i) {
        float v = (float)x[i];
        ss += v * v;
    }
    float scale = rsqrtf(ss / C + 1e-6f);
    for (int i = 0; i < C; ++i) {
        o[i] = (T)((float)x[i] * scale * (float)weight[i]);
    }
}
