// A butterfly from offset 8 sums groups of 16 lanes, not the warp: no match.
__global__ void group_sums(const float* x, float* y) {
    float s = x[blockIdx.x * blockDim.x + threadIdx.x];
    for (int m = 8; m > 0; m >>= 1) s += __shfl_xor_sync(0xffffffffu, s, m);
    y[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
