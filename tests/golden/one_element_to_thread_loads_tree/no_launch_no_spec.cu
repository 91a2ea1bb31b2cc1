// Refused: no spec and no launch of the kernel in this file.
#define B 256

__global__ void tree_partials(const float* in, float* out, unsigned int n) {
    __shared__ float sdata[B];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * B + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = B / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
