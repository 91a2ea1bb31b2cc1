/* klc-spec
kernel: affine_param_grads
sizes: {N: 16384, C: 1024}
verify_sizes:
  - {N: 301, C: 999}
  - {N: 3, C: 5}
args:
  - {name: dy, shape: [N, C], role: in, init: normal}
  - {name: xhat, shape: [N, C], role: in, init: normal}
  - {name: dgamma, shape: [C], role: inout, init: "normal(0, 0.1)"}
  - {name: dbeta, shape: [C], role: inout, init: "normal(0, 0.1)"}
  - {name: N, value: N}
  - {name: C, value: C}
grid: ["ceil_div(C, 256)"]
block: [256]
bytes: 8 * N * C + 16 * C
flops: 3 * N * C
tolerance: {rtol: 0.0002, atol: 0.00001}
*/
// Gradients of gamma and beta accumulated into the outputs, two declarations, a row pointer
// for each input, the bound spelled C > c.
__global__ void affine_param_grads(const float* dy, const float* xhat, float* dgamma,
                                   float* dbeta, int N, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (C > c) {
        float dg = 0.0f;
        float db = 0.0f;
        for (int n = 0; n < N; n++) {
            const float* dyr = dy + (size_t)n * C;
            const float* xr = xhat + (size_t)n * C;
            dg += dyr[c] * xr[c];
            db += dyr[c];
        }
        dgamma[c] += dg;
        dbeta[c] += db;
    }
}
