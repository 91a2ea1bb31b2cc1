/* klc-spec
kernel: block_dot
sizes: {n: 33554432}
verify_sizes:
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: y, shape: [n], role: in, init: normal}
  - {name: out, shape: [1], role: inout, init: normal}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
flops: 2 * n
tolerance: {rtol: 0.0001, atol: 0.01}
*/
// Per-block partial dot products: fewer blocks would write fewer partials.
__global__ void block_dot(const float* x, const float* y, float* out, int n) {
    __shared__ float cache[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float temp = 0.0f;
    if (i < n) temp = x[i] * y[i];
    cache[threadIdx.x] = temp;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (threadIdx.x < h) cache[threadIdx.x] += cache[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = cache[0];
}
