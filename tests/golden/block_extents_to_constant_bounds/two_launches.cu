// Near miss: no spec, and the file launches the kernel with two blocks, 32 x 8 and 32 x 4:
// the loops read the step from the block, which no one constant gives both launches.
#include <cuda_runtime.h>

__global__ void transpose_rows(float *out, const float *in, int rows, int cols) {
    __shared__ float tile[32][33];
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < blockDim.x; j += blockDim.y) {
        int r = blockIdx.y * blockDim.x + threadIdx.y + j;
        if (r < rows && c < cols) {
            tile[threadIdx.y + j][threadIdx.x] = in[r * cols + c];
        }
    }
    __syncthreads();
    for (int j = 0; j < blockDim.x; j += blockDim.y) {
        int c = blockIdx.x * blockDim.x + threadIdx.y + j;
        int r = blockIdx.y * blockDim.x + threadIdx.x;
        if (r < rows && c < cols) {
            out[c * rows + r] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}

void transpose(float *out, const float *in, int rows, int cols, bool narrow) {
    dim3 grid((cols + 31) / 32, (rows + 31) / 32);
    if (narrow) {
        transpose_rows<<<grid, dim3(32, 4)>>>(out, in, rows, cols);
    } else {
        transpose_rows<<<grid, dim3(32, 8)>>>(out, in, rows, cols);
    }
}
