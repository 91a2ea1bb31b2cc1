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
grid: ["(ceil_div(C, 256)) * 8"]
block: ["ceil_div(256, 8)", 32]
bytes: 8 * N * C + 16 * C
flops: 3 * N * C
tolerance: {rtol: 0.0002, atol: 0.00001}
*/
// Gradients of gamma and beta accumulated into the outputs, two declarations, a row pointer
// for each input, the bound spelled C > c.
__global__ void affine_param_grads(const float* dy, const float* xhat, float* dgamma,
                                   float* dbeta, int N, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    float dg = 0.0f;
    float db = 0.0f;
    __shared__ decltype(dg) part_s[1024];
    __shared__ decltype(db) part_sq[1024];
    if (c < C) {
        for (int n = threadIdx.y; n < N; n += blockDim.y) {
            const float* dyr = dy + (size_t)n * C;
            const float* xr = xhat + (size_t)n * C;
            dg += dyr[c] * xr[c];
            db += dyr[c];
        }
    }
    part_s[threadIdx.y * blockDim.x + threadIdx.x] = dg;
    part_sq[threadIdx.y * blockDim.x + threadIdx.x] = db;
    __syncthreads();
    if (c < C && threadIdx.y == 0) {
        for (int k = 1; k < blockDim.y; k++) {
            dg += part_s[k * blockDim.x + threadIdx.x];
            db += part_sq[k * blockDim.x + threadIdx.x];
        }
        dgamma[c] += dg;
        dbeta[c] += db;
    }
}
