/* klc-spec
kernel: layernorm_backward_dinp
sizes: {N: 16384, C: 1024}
verify_sizes:
  - {N: 256, C: 768}
  - {N: 301, C: 999}
  - {N: 3, C: 5}
args:
  - {name: dinp, shape: [N, C], role: out}
  - {name: dout, shape: [N, C], role: in, init: normal}
  - {name: inp, shape: [N, C], role: in, init: "normal(0.5, 2)"}
  - {name: weight, shape: [C], role: in, init: "uniform(0.5, 1.5)"}
  - {name: mean, shape: [N], role: in, init: "normal(0.5, 0.1)"}
  - {name: rstd, shape: [N], role: in, init: "uniform(0.4, 0.6)"}
  - {name: N, value: N}
  - {name: C, value: C}
grid: ["ceil_div(N, 128)"]
block: [128]
bytes: 12 * N * C + 4 * C + 8 * N
flops: 12 * N * C
tolerance: {rtol: 0.0002, atol: 0.00001}
timeout_s: 120
*/
// family: row-reduction
// style: thread per row, two passes over the row, row pointers for three buffers, saved statistics read back
// Layer norm backward, input gradient only: with norm = (x - mean) * rstd and
// dnorm = dout * weight,
//   dinp = rstd * (dnorm - mean_c(dnorm) - norm * mean_c(dnorm * norm)).
// bytes: dout and inp read, dinp written (12NC), weight (4C), mean and rstd (8N).
// flops: about 12 per element over the passes.
__global__ void layernorm_backward_dinp(float* dinp, const float* dout, const float* inp,
                                        const float* weight, const float* mean,
                                        const float* rstd, int N, int C) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= N) return;
    const float* dout_n = dout + n * C;
    const float* inp_n = inp + n * C;
    float* dinp_n = dinp + n * C;
    float mean_n = mean[n];
    float rstd_n = rstd[n];

    float dnorm_mean = 0.0f;
    float dnorm_norm_mean = 0.0f;
    for (int i = 0; i < C; i++) {
        float norm_i = (inp_n[i] - mean_n) * rstd_n;
        float dnorm_i = weight[i] * dout_n[i];
        dnorm_mean += dnorm_i;
        dnorm_norm_mean += dnorm_i * norm_i;
    }
    dnorm_mean = dnorm_mean / C;
    dnorm_norm_mean = dnorm_norm_mean / C;

    for (int i = 0; i < C; i++) {
        float norm_i = (inp_n[i] - mean_n) * rstd_n;
        float dnorm_i = weight[i] * dout_n[i];
        float g = dnorm_i - dnorm_mean - norm_i * dnorm_norm_mean;
        dinp_n[i] = g * rstd_n;
    }
}
