// A first transpose with its host code: one element per thread of a 32 x 8 block, no
// shared memory, the grid from integer arithmetic in dim3 variables.
#include <cuda_runtime.h>

#define BLOCK_W 32
#define BLOCK_H 8

__global__ void transpose_plain(float *dst, const float *src, int height, int width) {
    int col = threadIdx.x + blockIdx.x * blockDim.x;
    int row = threadIdx.y + blockIdx.y * blockDim.y;
    if (col < width && row < height)
        dst[col * height + row] = src[row * width + col];
}

void launch_transpose(float *dst, const float *src, int height, int width) {
    dim3 threads(BLOCK_W, BLOCK_H);
    dim3 blocks((width + BLOCK_W - 1) / BLOCK_W, (height + BLOCK_H - 1) / BLOCK_H);
    transpose_plain<<<blocks, threads>>>(dst, src, height, width);
}
