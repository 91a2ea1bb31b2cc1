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
// A block's absolute maximum by warp shuffles as public kernels write it: the lane and the warp
// in locals, each warp's maximum in a __device__ helper (fmaxf of the shuffled value), warp 0's
// lanes past the warp count padded with 0 (the identity of a maximum of fabsf values).
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
    warpMax[threadIdx.x] = (i < n) ? fabsf(x[i]) : 0.0f;
    __syncthreads();
    for (int offset = blockDim.x / 2; offset > 0; offset >>= 1) {
        if (threadIdx.x < offset) {
            warpMax[threadIdx.x] = fmaxf(warpMax[threadIdx.x], warpMax[threadIdx.x + offset]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = warpMax[0];
    }
}
