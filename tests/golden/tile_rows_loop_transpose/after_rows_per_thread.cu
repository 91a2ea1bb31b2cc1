// The first transpose of rows_per_thread_transpose/transpose_32x8_host_launch.cu after that
// skill (four rows per thread of a 32 x 8 block); near miss: src and dst may alias.
#include <cuda_runtime.h>

#define BLOCK_W 32
#define BLOCK_H 8

__global__ void transpose_plain(float *dst, const float *src, int height, int width) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.x + threadIdx.y;
    for (int j = 0; j < blockDim.x; j += blockDim.y) {
        if (row + j < height && col < width) {
            dst[col * height + (row + j)] = src[(row + j) * width + col];
        }
    }
}

void launch_transpose(float *dst, const float *src, int height, int width) {
    dim3 threads(BLOCK_W, BLOCK_H);
    dim3 blocks((width + BLOCK_W - 1) / BLOCK_W, (height + BLOCK_H * 4 - 1) / (BLOCK_H * 4));
    transpose_plain<<<blocks, threads>>>(dst, src, height, width);
}
