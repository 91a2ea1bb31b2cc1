// A barrier inside the loop body would end up under if (i < n): the rule must refuse.
__global__ void staged(const float* __restrict__ x, float* __restrict__ y, int n) {
    __shared__ float s[256];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        s[threadIdx.x] = x[i];
        __syncthreads();
        y[i] = s[255 - threadIdx.x];
        __syncthreads();
    }
}
