/* klc-spec
kernel: rmsnorm_fwd
sizes: {N: 32768, C: 1024}
verify_sizes:
  - {N: 256, C: 1024}
  - {N: 301, C: 999}
  - {N: 3, C: 5}
args:
  - {name: out, shape: [N, C], role: out}
  - {name: inp, shape: [N, C], role: in, init: normal}
  - {name: weight, shape: [C], role: in, init: "uniform(0.5, 1.5)"}
  - {name: N, value: N}
  - {name: C, value: C}
  - {name: eps, value: 0.000001}
grid: ["ceil_div(N, 128)"]
block: [128]
bytes: 8 * N * C + 4 * C
flops: 4 * N * C
tolerance: {rtol: 0.0002, atol: 0.00001}
timeout_s: 120
*/
// family: row-reduction
// style: thread per row, double accumulator, early return, size_t row offset, T *x spacing
// RMS norm over each row: out = x / sqrt(mean(x^2) + eps) * weight. The sum of squares is
// accumulated in double.
// bytes: inp read, out written (8NC), weight (4C). flops: square-add (2) and scale (2).
__global__ void rmsnorm_fwd(float *out, const float *inp, const float *weight, int N, int C,
                            float eps) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= N) return;
    const float *x = inp + (size_t)row * C;
    double ss = 0.0;
    for (int c = 0; c < C; ++c) {
        ss += (double)x[c] * x[c];
    }
    float scale = (float)(1.0 / sqrt(ss / C + eps));
    float *y = out + (size_t)row * C;
    for (int c = 0; c < C; ++c) {
        y[c] = x[c] * scale * weight[c];
    }
}
