/* klc-spec
kernel: warp_partials
sizes: {n: 65536}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: partial, shape: ["ceil_div(n, 32)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 32)"]
block: [32]
*/
// Near miss: a block of one warp; there are no warp sums for warp 0 to add.
__global__ void warp_partials(const float* x, float* partial, int n) {
    __shared__ float s[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) {
            s[threadIdx.x] += s[threadIdx.x + k];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s[0];
    }
}
