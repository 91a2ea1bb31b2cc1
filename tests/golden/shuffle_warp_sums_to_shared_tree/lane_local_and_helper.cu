/* klc-spec
kernel: reduce_helper
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
// The shuffle reduction with its lane and warp index in unsigned locals (tid % 32, tid / 32)
// and each warp's shuffles in a __device__ helper called as sum = warpReduceSum(sum).
__device__ float warpReduceSum(float val) {
    for (int offset = 16; offset > 0; offset >>= 1)
        val += __shfl_down_sync(0xffffffff, val, offset);
    return val;
}

__global__ void reduce_helper(const float* in, float* out, int n) {
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    unsigned int lane = tid % 32;
    unsigned int warp = tid / 32;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = (i < n) ? in[i] : 0.0f;
    sum = warpReduceSum(sum);
    if (lane == 0) sdata[warp] = sum;
    __syncthreads();
    if (tid < 32) {
        sum = tid < 256 / 32 ? sdata[tid] : 0.0f;
        sum = warpReduceSum(sum);
    }
    if (tid == 0) out[blockIdx.x] = sum;
}
