/* klc-spec
kernel: partial_sums
template: {THREADS: 128}
sizes: {n: 1048576}
verify_sizes:
  - {n: 4099}
args:
  - {name: x, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: partials, shape: ["ceil_div(n, THREADS)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, THREADS)"]
block: [THREADS]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// An unsigned full mask, a signed thread index, the squares summed.
template <int THREADS>
__global__ void partial_sums(const float* x, float* partials, int n) {
    __shared__ float red[THREADS];
    const int tid = threadIdx.x;
    int i = blockIdx.x * THREADS + tid;
    float acc = i < n ? x[i] * x[i] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {
        acc += __shfl_down_sync(0xffffffffu, acc, o);
    }
    if (tid % 32 == 0) {
        red[tid / 32] = acc;
    }
    __syncthreads();
    if (tid < 32) {
        acc = tid < THREADS / 32 ? red[tid] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) {
            acc += __shfl_down_sync(0xffffffffu, acc, o);
        }
    }
    if (tid == 0) {
        partials[blockIdx.x] = acc;
    }
}
