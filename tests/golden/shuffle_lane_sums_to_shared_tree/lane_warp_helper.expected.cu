/* klc-spec
kernel: reduce_lanes
sizes: {n: 1048576}
verify_sizes:
  - {n: 1000003}
args:
  - {name: in, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// A block sum written as public kernels write it: the lane and the warp index in locals
// (threadIdx.x % warpSize, threadIdx.x / warpSize), each warp's shuffles in a __device__ helper
// called as sum = warpReduceSum(sum), every thread loading its lane's warp sum.
__device__ float warpReduceSum(float val) {
    for (int offset = warpSize / 2; offset > 0; offset >>= 1)
        val += __shfl_down_sync(0xffffffff, val, offset);
    return val;
}

__global__ void reduce_lanes(const float* in, float* out, int n) {
    __shared__ float warpSums[256];
    int lane = threadIdx.x % warpSize;
    int warp = threadIdx.x / warpSize;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    warpSums[threadIdx.x] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (int offset = blockDim.x / 2; offset > 0; offset >>= 1) {
        if (threadIdx.x < offset) {
            warpSums[threadIdx.x] += warpSums[threadIdx.x + offset];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[blockIdx.x] = warpSums[0];
    }
}
