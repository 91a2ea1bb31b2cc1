// out is only the target of an atomicAdd.
__global__ void count(const float* x, float* __restrict__ out, int n) {
    if (blockIdx.x * blockDim.x + threadIdx.x < n) {
        atomicAdd(out, 1.0f);
    }
}
