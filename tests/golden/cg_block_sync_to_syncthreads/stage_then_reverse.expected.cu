// A block stages its values in shared memory and reads them back reversed.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void reverse_block(const float* x, float* y) {
    __shared__ float stage[256];
    cg::thread_block block = cg::this_thread_block();
    stage[threadIdx.x] = x[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    y[blockIdx.x * 256 + threadIdx.x] = stage[255 - threadIdx.x];
}
