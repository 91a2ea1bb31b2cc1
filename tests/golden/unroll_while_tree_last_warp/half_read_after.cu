/* klc-spec
kernel: sum_levels
sizes: {n: 65536}
args:
  - {name: v, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: out, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Near miss: `half` is read after the loop (it ends at 0 there; the warp's levels would
// leave it at 32).
__global__ void sum_levels(const float* v, float* out, int n) {
    __shared__ float cache[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cache[threadIdx.x] = i < n ? v[i] : 0.0f;
    __syncthreads();
    int half = blockDim.x / 2;
    while (half != 0) {
        if (threadIdx.x < half) cache[threadIdx.x] += cache[threadIdx.x + half];
        __syncthreads();
        half /= 2;
    }
    if (threadIdx.x == half) out[blockIdx.x] = cache[0];
}
