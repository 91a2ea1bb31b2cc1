// x is still __restrict__: remove_restrict first, so the rule refuses.
__global__ void copy(const float* __restrict__ x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = x[i];
    }
}
