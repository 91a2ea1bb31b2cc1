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
// The lane and the warp as bit operations (tid & 31, tid >> 5): the rule alone does not take
// them, a walk does once index_bits.rule has spelled them as remainder and division.
__device__ float warpReduceSum(float val) {
    for (int offset = warpSize / 2; offset > 0; offset >>= 1)
        val += __shfl_down_sync(0xffffffff, val, offset);
    return val;
}

__global__ void reduce_lanes(const float* in, float* out, int n) {
    __shared__ float warpSums[256];
    unsigned int tid = threadIdx.x;
    unsigned int lane = tid & 31;
    unsigned int warp = tid >> 5;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = (i < n) ? in[i] : 0.0f;
    sum = warpReduceSum(sum);
    if (lane == 0) warpSums[warp] = sum;
    __syncthreads();
    sum = (threadIdx.x < blockDim.x / warpSize) ? warpSums[lane] : 0.0f;
    if (warp == 0) sum = warpReduceSum(sum);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
}
