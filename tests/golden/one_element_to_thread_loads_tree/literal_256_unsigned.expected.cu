// The partition as a literal 256, unsigned indices, no spec: the host launch in main is the
// only record of the block.
#include <cuda_runtime.h>

__global__ void partial_sum(const float* in, float* partial, unsigned int n) {
    __shared__ float sm[256];
    unsigned int t = threadIdx.x;
    unsigned int g = blockIdx.x * 256 + t;
    float sum = 0.0f;
    for (unsigned int j = 0; j < 4; j++) {
        unsigned int idx = g + j * (256 / 4);
        if (idx < n) {
            sum += in[idx];
        }
    }
    sm[t] = sum;
    __syncthreads();
    for (unsigned int half = 256 / 4 / 2; half > 0; half >>= 1) {
        if (t < half) {
            sm[t] += sm[t + half];
        }
        __syncthreads();
    }
    if (t == 0) {
        partial[blockIdx.x] = sm[0];
    }
}

int main() {
    unsigned int n = 1u << 24;
    float *in, *partial;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&partial, (n + 255) / 256 * sizeof(float));
    partial_sum<<<(n + 255) / 256, 64>>>(in, partial, n);
    cudaDeviceSynchronize();
    return 0;
}
