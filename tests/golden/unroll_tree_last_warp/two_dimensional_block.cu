/* klc-spec
kernel: tile_sums
sizes: {n: 65536}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: partial, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [128, 2]
*/
// Near miss: a two-dimensional block; threadIdx.x < 32 names a warp of each row, and the
// rows share the tree.
__global__ void tile_sums(const float* x, float* partial, int n) {
    __shared__ float s[128];
    if (threadIdx.y == 0) {
        int i = blockIdx.x * 128 + threadIdx.x;
        s[threadIdx.x] = i < n ? x[i] : 0.0f;
    }
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0 && threadIdx.y == 0) partial[blockIdx.x] = s[0];
}
