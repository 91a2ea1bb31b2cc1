// A tiled transpose with no klc-spec, launched from a host function of the same file, the
// block a dim3 of the file's #define constants: every launch fixes it at 32 x 8, so the
// loops over the tile's rows take the bounds 32 and 8.
#include <cuda_runtime.h>

#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transpose_shared(float *odata, const float *idata, int n)
{
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.x + threadIdx.y;
    for (int j = 0; j < blockDim.x; j += blockDim.y) {
        if (x < n && y + j < n)
            tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * n + x];
    }
    __syncthreads();
    x = blockIdx.y * blockDim.x + threadIdx.x;
    y = blockIdx.x * blockDim.x + threadIdx.y;
    for (int j = 0; j < blockDim.x; j += blockDim.y) {
        if (x < n && y + j < n)
            odata[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}

void transpose(float *out, const float *in, int n, cudaStream_t stream)
{
    dim3 block(TILE_DIM, BLOCK_ROWS);
    dim3 grid((n + TILE_DIM - 1) / TILE_DIM, (n + TILE_DIM - 1) / TILE_DIM);
    transpose_shared<<<grid, block, 0, stream>>>(out, in, n);
}
