// A 2-D kernel on __half data at 8 x 8 blocks, one element per thread: the block grows to the
// 32 x 32 the skill was learned at (?s = 4, the value the search proposes first for this
// block), whatever the element type.
#include <cuda_fp16.h>
__global__ void scale_half(__half *y, const __half *x, __half s, int rows, int cols) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows && c < cols) {
        y[(size_t)r * cols + c] = __hmul(x[(size_t)r * cols + c], s);
    }
}
void run(__half *y, const __half *x, __half s, int rows, int cols) {
    scale_half<<<dim3((cols + 31) / 32, (rows + 31) / 32), dim3(32, 32)>>>(y, x, s, rows, cols);
}
