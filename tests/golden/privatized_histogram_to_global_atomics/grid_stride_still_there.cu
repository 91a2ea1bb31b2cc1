// The privatised histogram with its grid-stride loop still in place: the pass does not
// match (passes/ORDER peels the loop first, with grid_stride_to_one_per_thread), so that
// its inverse skill's anchor is the one-element-per-thread shape.
__global__ void count(const int* labels, unsigned int* counts, int n) {
    __shared__ unsigned int s[64];
    for (int b = threadIdx.x; b < 64; b += blockDim.x) {
        s[b] = 0u;
    }
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&s[labels[i]], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 64; b += blockDim.x) {
        unsigned int c = s[b];
        if (c != 0u) {
            atomicAdd(&counts[b], c);
        }
    }
}
