// A warp-shuffle block sum (256 threads) becomes a shared-memory tree, last warp unrolled.
__global__ void __launch_bounds__(256) block_sum(const float* __restrict__ x, float* out, int n) {
    __shared__ float warp_sums[256 / 32];
    float acc = 0.0f;
    int i = blockIdx.x * 256 + threadIdx.x;
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
        acc = threadIdx.x < 256 / 32 ? warp_sums[threadIdx.x] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) {
            acc += __shfl_down_sync(0xffffffffu, acc, offset);
        }
    }
    if (threadIdx.x == 0) {
        atomicAdd(out, acc);
    }
}
