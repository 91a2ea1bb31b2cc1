/* klc-spec
kernel: block_max
sizes: {n: 1048576}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: partial, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 4 * n
flops: n
*/
// One maximum per block into partial[blockIdx.x]: the output counts blocks, so fewer blocks
// would leave partials unwritten.
__global__ void block_max(const float* x, float* partial, int n) {
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float m = -INFINITY;
    if (i < n) {
        m = x[i];
    }
    s[threadIdx.x] = m;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] = fmaxf(s[threadIdx.x], s[threadIdx.x + k]);
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}
