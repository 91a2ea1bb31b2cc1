// Near miss: launched by a function of the file with the pointers it is given, which may be
// one buffer (an in-place call): staging the block's reads before its writes would change
// what the other blocks read.
#include <cuda_runtime.h>

#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transpose_square(float *odata, const float *idata, int width)
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
