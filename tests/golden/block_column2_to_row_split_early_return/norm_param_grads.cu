/* klc-spec
kernel: norm_param_grads
sizes: {N: 8192, C: 1536}
verify_sizes:
  - {N: 301, C: 999}
  - {N: 3, C: 5}
args:
  - {name: dgamma, shape: [C], role: inout, init: "normal(0, 0.1)"}
  - {name: dbeta, shape: [C], role: inout, init: "normal(0, 0.1)"}
  - {name: dout, shape: [N, C], role: in, init: normal}
  - {name: xhat, shape: [N, C], role: in, init: normal}
  - {name: N, value: N}
  - {name: C, value: C}
grid: ["ceil_div(C, 32)"]
block: [32, 16]
bytes: 8 * N * C + 16 * C
flops: 3 * N * C
tolerance: {rtol: 0.0002, atol: 0.00001}
*/
// A norm's gamma and beta gradients from the normalised input, accumulated into the
// gradients (+=): a 32 x 16 block per 32 channels, 64-bit row offsets, early return.
__global__ void norm_param_grads(float* __restrict__ dgamma, float* __restrict__ dbeta,
                                 const float* __restrict__ dout,
                                 const float* __restrict__ xhat, int N, int C) {
    int ch = blockIdx.x * blockDim.x + threadIdx.x;
    float g = 0.0f, b = 0.0f;
    __shared__ decltype(g) sg[1024];
    __shared__ decltype(b) sb[1024];
    if (ch < C) {
        for (int n = threadIdx.y; n < N; n += blockDim.y) {
            size_t off = (size_t)n * C + ch;
            g += dout[off] * xhat[off];
            b += dout[off];
        }
    }
    sg[threadIdx.y * blockDim.x + threadIdx.x] = g;
    sb[threadIdx.y * blockDim.x + threadIdx.x] = b;
    __syncthreads();
    if (ch >= C || threadIdx.y != 0) return;
    for (int k = 1; k < blockDim.y; k++) {
        g += sg[k * blockDim.x + threadIdx.x];
        b += sb[k * blockDim.x + threadIdx.x];
    }
    dgamma[ch] += g;
    dbeta[ch] += b;
}
