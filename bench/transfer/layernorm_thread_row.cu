/* klc-spec
kernel: layernorm_forward
sizes: {N: 32768, C: 1024}
verify_sizes:
  - {N: 256, C: 768}
  - {N: 301, C: 1001}
  - {N: 5, C: 3}
args:
  - {name: out, shape: [N, C], role: out}
  - {name: mean, shape: [N], role: out}
  - {name: rstd, shape: [N], role: out}
  - {name: inp, shape: [N, C], role: in, init: "normal(0.5, 2)"}
  - {name: weight, shape: [C], role: in, init: "uniform(0.5, 1.5)"}
  - {name: bias, shape: [C], role: in, init: "normal(0, 0.5)"}
  - {name: N, value: N}
  - {name: C, value: C}
grid: ["ceil_div(N, 256)"]
block: [256]
bytes: 8 * N * C + 8 * N + 8 * C
flops: 7 * N * C
tolerance: {rtol: 0.0002, atol: 0.00001}
timeout_s: 120
*/
// family: row-reduction
// style: thread per row, row pointers, local eps, statistics kept for the backward pass
// Layer norm over each row of (N, C): mean, 1/sqrt(var + 1e-5), then
//   out = (x - mean) * rstd * weight + bias;  mean and rstd are saved per row.
// bytes: inp read, out written (8NC), mean and rstd written (8N), weight and bias (8C).
// flops: sum (1), centred square (3), normalise and affine (3) per element.
__global__ void layernorm_forward(float* out, float* mean, float* rstd, const float* inp,
                                  const float* weight, const float* bias, int N, int C) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    float eps = 1e-5f;
    if (idx < N) {
        const float* x = inp + idx * C;
        float m = 0.0f;
        for (int i = 0; i < C; i++) {
            m += x[i];
        }
        m = m / C;
        float v = 0.0f;
        for (int i = 0; i < C; i++) {
            float d = x[i] - m;
            v += d * d;
        }
        v = v / C;
        float s = 1.0f / sqrtf(v + eps);
        float* o = out + idx * C;
        for (int i = 0; i < C; i++) {
            float n = s * (x[i] - m);
            o[i] = n * weight[i] + bias[i];
        }
        mean[idx] = m;
        rstd[idx] = s;
    }
}
