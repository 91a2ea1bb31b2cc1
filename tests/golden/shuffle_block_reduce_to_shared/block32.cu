// A one-warp block: the tree would read red[tid + 32] past the block; the rule must refuse.
__global__ void __launch_bounds__(32) block_sum(const float* __restrict__ x, float* out, int n) {
    __shared__ float warp_sums[32 / 32];
    float acc = 0.0f;
    int i = blockIdx.x * 32 + threadIdx.x;
    if (i < n) {
        acc = x[i];
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        acc += __shfl_down_sync(0xffffffffu, acc, offset);
    }
    if (threadIdx.x % 32 == 0) {
        warp_sums[threadIdx.x / 32] = acc;
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        acc = threadIdx.x < 32 / 32 ? warp_sums[threadIdx.x] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) {
            acc += __shfl_down_sync(0xffffffffu, acc, offset);
        }
    }
    if (threadIdx.x == 0) {
        atomicAdd(out, acc);
    }
}
