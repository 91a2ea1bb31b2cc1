/* klc-spec
kernel: partial_sums
sizes: {n: 1048576}
verify_sizes:
  - {n: 1048576}
args:
  - {name: x, shape: [n], role: in, init: "uniform(-1, 1)"}
  - {name: partial, shape: ["ceil_div(n, 256)"], role: out}
  - {name: first, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// Refused: thread 0 of each block also copies the segment's first element: with a warp per
// segment, block b's thread 0 would copy segment b's first element for only 1 in ?wpb segments.
__global__ void partial_sums(const float* x, float* partial, float* first, int n) {
    if (threadIdx.x == 0) {
        first[blockIdx.x] = x[blockIdx.x * 256];
    }
    __shared__ float cache[256];
    unsigned int t = threadIdx.x;
    int i = blockIdx.x * 256 + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (unsigned int o = 16; o > 0; o >>= 1) {
        v += __shfl_down_sync(0xffffffff, v, o);
    }
    if (t % 32 == 0) {
        cache[t / 32] = v;
    }
    __syncthreads();
    if (t < 32) {
        v = t < 256 / 32 ? cache[t] : 0.0f;
        for (unsigned int o = 16; o > 0; o >>= 1) {
            v += __shfl_down_sync(0xffffffff, v, o);
        }
    }
    if (t == 0) {
        partial[blockIdx.x] = v;
    }
}

void run_partials(const float* x, float* partial, float* first, int n) {
    if (threadIdx.x == 0) {
        first[blockIdx.x] = x[blockIdx.x * 256];
    }
    dim3 grid((n + 255) / 256);
    dim3 block(256);
    partial_sums<<<grid, block>>>(x, partial, first, n);
}
