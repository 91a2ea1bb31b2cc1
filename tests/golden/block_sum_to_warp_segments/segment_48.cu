/* klc-spec
kernel: partial_sums
sizes: {n: 1048576}
verify_sizes:
  - {n: 1000003}
args:
  - {name: x, shape: [n], role: in, init: "uniform(-1, 1)"}
  - {name: partial, shape: ["ceil_div(n, 48)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 48)"]
block: [48]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// Refused: a segment of 48 elements is not a multiple of 32 (a warp and a half).
__global__ void partial_sums(const float* x, float* partial, int n) {
    __shared__ float cache[48];
    unsigned int t = threadIdx.x;
    int i = blockIdx.x * 48 + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (unsigned int o = 16; o > 0; o >>= 1) {
        v += __shfl_down_sync(0xffffffff, v, o);
    }
    if (t % 32 == 0) {
        cache[t / 32] = v;
    }
    __syncthreads();
    if (t < 32) {
        v = t < 48 / 32 ? cache[t] : 0.0f;
        for (unsigned int o = 16; o > 0; o >>= 1) {
            v += __shfl_down_sync(0xffffffff, v, o);
        }
    }
    if (t == 0) {
        partial[blockIdx.x] = v;
    }
}

void run_partials(const float* x, float* partial, int n) {
    dim3 grid((n + 255) / 48);
    dim3 block(48);
    partial_sums<<<grid, block>>>(x, partial, n);
}
