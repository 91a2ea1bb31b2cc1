// The partition as a template constant launched as block_sum<256><<<blocks, 256>>>, no
// spec, an int thread index and the tree's level unbraced.
#include <cuda_runtime.h>

template <int BLOCK_SIZE>
__global__ void block_sum(const float* in, float* partial, int n) {
    __shared__ float sdata[BLOCK_SIZE];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    float sum = 0.0f;
    for (int j = 0; j < 4; j++) {
        int idx = i + j * (BLOCK_SIZE / 4);
        if (idx < n) {
            sum += in[idx];
        }
    }
    sdata[tid] = sum;
    __syncthreads();
    for (int s = BLOCK_SIZE / 4 / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
    }
}

int main() {
    const int n = 1 << 22;
    const int blocks = (n + 255) / 256;
    float *d_in, *d_partial;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_partial, blocks * sizeof(float));
    block_sum<256><<<blocks, 64>>>(d_in, d_partial, n);
    cudaDeviceSynchronize();
    return 0;
}
