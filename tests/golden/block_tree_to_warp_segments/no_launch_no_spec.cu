// Refused: no spec and no launch of the kernel in this file: its callers elsewhere would
// launch the rewritten kernel with the old grid and block.
__global__ void partial_sums(const float* x, float* partial, int n) {
    __shared__ float red[256];
    int tid = threadIdx.x;
    int i = blockIdx.x * 256 + threadIdx.x;
    red[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int stride = 256 / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            red[tid] += red[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = red[0];
    }
}
