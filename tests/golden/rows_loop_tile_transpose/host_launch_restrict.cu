// The rows-loop transpose of a square matrix whose width is a parameter, launched by a
// function of the file (no spec): the block is the launch's TILE_DIM x BLOCK_ROWS dim3, and
// __restrict__ on both pointers says that they do not alias.
#include <cuda_runtime.h>

#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transpose_square(float *__restrict__ odata, const float *__restrict__ idata, int width)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[x * width + (y + j)] = idata[(y + j) * width + x];
}

void transpose_on_device(float *odata, const float *idata, int width)
{
    dim3 grid(width / TILE_DIM, width / TILE_DIM);
    dim3 block(TILE_DIM, BLOCK_ROWS);
    transpose_square<<<grid, block>>>(odata, idata, width);
}
