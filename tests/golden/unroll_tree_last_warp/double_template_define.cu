/* klc-spec
kernel: block_dot
template: {THREADS: 128}
sizes: {n: 1000003}
args:
  - {name: a, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: b, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: partial, shape: ["ceil_div(n, THREADS)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, THREADS)"]
block: [THREADS]
*/
// A double tree in a templated block size, a product per element, and every thread
// reading the total after the tree (the barrier after warp 0's levels publishes cache[0]).
template <int THREADS>
__global__ void block_dot(const double* a, const double* b, double* partial, int n) {
    __shared__ double cache[THREADS];
    int i = blockIdx.x * THREADS + threadIdx.x;
    cache[threadIdx.x] = i < n ? a[i] * b[i] : 0.0;
    __syncthreads();
    for (int stride = THREADS / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            cache[threadIdx.x] += cache[threadIdx.x + stride];
        }
        __syncthreads();
    }
    double total = cache[0];
    if (threadIdx.x == blockDim.x - 1) partial[blockIdx.x] = total;
}

template __global__ void block_dot<128>(const double*, const double*, double*, int);
