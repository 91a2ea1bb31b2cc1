/* klc-spec
kernel: block_absmax
sizes: {n: 33554432}
verify_sizes:
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: out, shape: [1], role: inout, init: zeros}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
flops: 2 * n
tolerance: {rtol: 0.0001, atol: 0.01}
*/
// A max tree with an integer atomicMax on the float bits: not a sum.
__global__ void block_absmax(const float* x, float* out, int n) {
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float m = 0.0f;
    if (i < n) m = fabsf(x[i]);
    s[threadIdx.x] = m;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] = fmaxf(s[threadIdx.x], s[threadIdx.x + k]);
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicMax((int*)out, __float_as_int(s[0]));
}
