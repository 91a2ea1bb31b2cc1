/* klc-spec
kernel: half_max
sizes: {n: 1048576}
args:
  - {name: x, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: out, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Near miss: `t` is threadIdx.x folded onto 128 slots, so two warps share each index; warp 0
// alone finishing the tree would race with warp 4.
__global__ void half_max(const float* x, float* out, int n) {
    __shared__ float sm[128];
    int t = threadIdx.x % 128;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < 128) sm[t] = -1e30f;
    __syncthreads();
    if (i < n) sm[t] = fmaxf(sm[t], fabsf(x[i]));
    __syncthreads();
    for (int s = 128 / 2; s > 0; s >>= 1) {
        if (t < s) sm[t] = fmaxf(sm[t], sm[t + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = sm[0];
}
