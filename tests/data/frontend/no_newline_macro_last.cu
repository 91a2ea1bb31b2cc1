#include <cuda_runtime.h>
#define BLOCK 256
__global__ void last_line_kernel(int *p) { p[threadIdx.x] = BLOCK; }
INSTANTIATE_SOMETHING(last_line_kernel)