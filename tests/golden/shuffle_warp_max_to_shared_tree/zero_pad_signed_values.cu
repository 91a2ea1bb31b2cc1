/* klc-spec
kernel: block_absmax_shfl
sizes: {n: 1048576}
verify_sizes:
  - {n: 1000003}
args:
  - {name: x, shape: [n], role: in, init: "normal(0, 3)"}
  - {name: partial, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Refused: warp 0's lanes past the warp count take 0, and the values may all be negative:
// the shuffles' maximum would then be 0 where the tree's is the largest value.
__device__ float warpReduceMax(float val) {
    for (int offset = warpSize / 2; offset > 0; offset >>= 1)
        val = fmaxf(val, __shfl_down_sync(0xffffffff, val, offset));
    return val;
}

__global__ void block_absmax_shfl(const float* x, float* partial, int n) {
    __shared__ float warpMax[256];
    int lane = threadIdx.x % warpSize;
    int warp = threadIdx.x / warpSize;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float m = (i < n) ? x[i] : 0.0f;
    m = warpReduceMax(m);
    if (lane == 0) warpMax[warp] = m;
    __syncthreads();
    m = (threadIdx.x < blockDim.x / warpSize) ? warpMax[lane] : 0.0f;
    if (warp == 0) m = warpReduceMax(m);
    if (threadIdx.x == 0) partial[blockIdx.x] = m;
}
