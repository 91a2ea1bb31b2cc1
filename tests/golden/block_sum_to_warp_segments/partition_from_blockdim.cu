/* klc-spec
kernel: partial_sums
sizes: {n: 1048576}
verify_sizes:
  - {n: 1000003}
args:
  - {name: x, shape: [n], role: in, init: "uniform(-1, 1)"}
  - {name: partial, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// Not matched: the partition is the launched block (blockIdx.x * blockDim.x), not a
// compile-time segment: a launch edit would change it with the block.
__global__ void partial_sums(const float* x, float* partial, int n) {
    __shared__ float cache[256];
    unsigned int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (unsigned int o = 16; o > 0; o >>= 1) {
        v += __shfl_down_sync(0xffffffff, v, o);
    }
    if (t % 32 == 0) {
        cache[t / 32] = v;
    }
    __syncthreads();
    if (t < 32) {
        v = t < blockDim.x / 32 ? cache[t] : 0.0f;
        for (unsigned int o = 16; o > 0; o >>= 1) {
            v += __shfl_down_sync(0xffffffff, v, o);
        }
    }
    if (t == 0) {
        partial[blockIdx.x] = v;
    }
}

void run_partials(const float* x, float* partial, int n) {
    dim3 grid((n + 255) / 256);
    dim3 block(256);
    partial_sums<<<grid, block>>>(x, partial, n);
}
