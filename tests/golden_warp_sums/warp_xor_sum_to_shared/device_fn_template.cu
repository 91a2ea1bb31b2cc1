// Row sums: the warp's butterfly lives in a templated device function over an array of NUM sums.
template <typename T, int NUM>
__device__ void warp_sum_all(T* v) {
#pragma unroll
    for (int k = 0; k < NUM; k++) {
        for (int m = 16; m > 0; m >>= 1)
            v[k] += __shfl_xor_sync(0xffffffff, v[k], m);
    }
}

__global__ void row_sums(const float* x, float* y, int cols) {
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    float s[1] = {0.0f};
    for (int c = threadIdx.x % 32; c < cols; c += 32) s[0] += x[row * cols + c];
    warp_sum_all<float, 1>(s);
    if (threadIdx.x % 32 == 0) y[row] = s[0];
}
