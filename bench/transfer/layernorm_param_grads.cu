/* klc-spec
kernel: layernorm_param_grads
sizes: {N: 16384, C: 2048}
verify_sizes:
  - {N: 256, C: 768}
  - {N: 301, C: 999}
  - {N: 3, C: 5}
args:
  - {name: dweight, shape: [C], role: inout, init: "normal(0, 0.1)"}
  - {name: dbias, shape: [C], role: inout, init: "normal(0, 0.1)"}
  - {name: dout, shape: [N, C], role: in, init: normal}
  - {name: inp, shape: [N, C], role: in, init: "normal(0.5, 2)"}
  - {name: mean, shape: [N], role: in, init: "normal(0.5, 0.1)"}
  - {name: rstd, shape: [N], role: in, init: "uniform(0.4, 0.6)"}
  - {name: N, value: N}
  - {name: C, value: C}
grid: ["ceil_div(C, 128)"]
block: [128]
bytes: 8 * N * C + 8 * N + 16 * C
flops: 5 * N * C
tolerance: {rtol: 0.0002, atol: 0.00001}
timeout_s: 120
*/
// family: column-reduction
// style: thread per column, two outputs accumulated (+=), per-row statistics re-read by every thread, T *x spacing
// Layer norm parameter gradients: with norm[n, c] = (inp[n, c] - mean[n]) * rstd[n],
//   dweight[c] += sum over n of dout[n, c] * norm[n, c];  dbias[c] += sum over n of dout[n, c].
// bytes: dout and inp read (8NC), mean and rstd (8N), dweight and dbias read and written
// (16C). flops: 5 per element.
__global__ void layernorm_param_grads(float *dweight, float *dbias, const float *dout,
                                      const float *inp, const float *mean, const float *rstd,
                                      int N, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float dw = 0.0f;
    float db = 0.0f;
    for (int n = 0; n < N; n++) {
        float norm = (inp[n * C + c] - mean[n]) * rstd[n];
        float d = dout[n * C + c];
        dw += d * norm;
        db += d;
    }
    dweight[c] += dw;
    dbias[c] += db;
}
