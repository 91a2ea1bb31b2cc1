#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// A block reverses its slice through shared memory.
__global__ void reverse_block(float* y, const float* x) {
    cg::thread_block block = cg::this_thread_block();
    __shared__ float buf[256];
    buf[threadIdx.x] = x[blockIdx.x * 256 + threadIdx.x];
    block.sync();
    y[blockIdx.x * 256 + threadIdx.x] = buf[255 - threadIdx.x];
}
