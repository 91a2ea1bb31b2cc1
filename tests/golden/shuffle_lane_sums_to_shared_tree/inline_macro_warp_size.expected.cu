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
// The same with the lane and warp written inline (tid % WARP_SIZE, tid / WARP_SIZE), the
// warp size a macro, the second shuffle loop written out in the kernel.
#define WARP_SIZE 32
__device__ float warpReduceSum(float val) {
    for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1)
        val += __shfl_down_sync(0xffffffff, val, offset);
    return val;
}

__global__ void reduce_lanes(const float* in, float* out, int n) {
    __shared__ float warpSums[256];
    unsigned int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    warpSums[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (int offset = blockDim.x / 2; offset > 0; offset >>= 1) {
        if (tid < offset) {
            warpSums[tid] += warpSums[tid + offset];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = warpSums[0];
    }
}
