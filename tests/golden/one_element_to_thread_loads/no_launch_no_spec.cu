// Refused: no spec and no launch of the kernel in this file: its callers elsewhere would
// launch the rewritten kernel with the old block.
__global__ void partials(const float* in, float* out, int n) {
    __shared__ float red[256];
    int tid = threadIdx.x;
    int i = blockIdx.x * 256 + tid;
    float sum = (i < n) ? in[i] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {
        sum += __shfl_down_sync(0xffffffff, sum, o);
    }
    if (tid % 32 == 0) {
        red[tid / 32] = sum;
    }
    __syncthreads();
    if (tid < 32) {
        sum = tid < 256 / 32 ? red[tid] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) {
            sum += __shfl_down_sync(0xffffffff, sum, o);
        }
    }
    if (tid == 0) {
        out[blockIdx.x] = sum;
    }
}
