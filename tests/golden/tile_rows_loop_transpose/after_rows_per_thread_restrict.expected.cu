// The first transpose of rows_per_thread_transpose/transpose_32x8_host_launch.cu after that
// skill (four rows per thread of a 32 x 8 block), its pointers __restrict__.
#include <cuda_runtime.h>

#define BLOCK_W 32
#define BLOCK_H 8

__global__ void transpose_plain(float *__restrict__ dst, const float *__restrict__ src, int height, int width) {
    __shared__ float tile[32][32];
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.x + threadIdx.y;
    for (int j = 0; j < blockDim.x; j += blockDim.y) {
        if (row + j < height && col < width) {
            tile[threadIdx.y + j][threadIdx.x] = src[(row + j) * width + col];
        }
    }
    __syncthreads();
    for (int j = 0; j < blockDim.x; j += blockDim.y) {
        int col = blockIdx.x * blockDim.x + threadIdx.y + j;
        int row = blockIdx.y * blockDim.x + threadIdx.x;
        if (row < height && col < width) {
            dst[col * height + row] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}

void launch_transpose(float *__restrict__ dst, const float *__restrict__ src, int height, int width) {
    dim3 threads(BLOCK_W, BLOCK_H);
    dim3 blocks((width + BLOCK_W - 1) / BLOCK_W, (height + BLOCK_H * 4 - 1) / (BLOCK_H * 4));
    transpose_plain<<<blocks, threads>>>(dst, src, height, width);
}
