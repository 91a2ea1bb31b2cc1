// Refused: no spec and no launch of the kernel in this file: its callers elsewhere would
// launch the rewritten kernel with the old grid and block.
__global__ void partial_sums(const float* x, float* partial, int n) {
    __shared__ float cache[256];
    unsigned int t = threadIdx.x;
    int i = blockIdx.x * 256 + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (unsigned int o = 16; o > 0; o >>= 1) {
        v += __shfl_down_sync(0xffffffff, v, o);
    }
    if (t % 32 == 0) {
        cache[t / 32] = v;
    }
    __syncthreads();
    if (t < 32) {
        v = t < 256 / 32 ? cache[t] : 0.0f;
        for (unsigned int o = 16; o > 0; o >>= 1) {
            v += __shfl_down_sync(0xffffffff, v, o);
        }
    }
    if (t == 0) {
        partial[blockIdx.x] = v;
    }
}
