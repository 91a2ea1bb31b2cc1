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
    red[tid] = i < n ? x[i] * x[i] : 0.0f;
    __syncthreads();
    for (int o = THREADS / 2; o > 0; o >>= 1) {
        if (tid < o) {
            red[tid] += red[tid + o];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partials[blockIdx.x] = red[0];
    }
}
