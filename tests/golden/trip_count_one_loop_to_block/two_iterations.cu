// Two iterations: not a loop of one, no match.
__global__ void scale_pairs(float* x, int n) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (2 * t + 1 < n) {
        for (int r = 0; r < 2; ++r) {
            x[2 * t + r] *= 2.0f;
        }
    }
}
