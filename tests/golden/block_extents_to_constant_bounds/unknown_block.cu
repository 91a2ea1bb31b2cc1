// Near miss: no spec and no launch of the kernel in this file (its callers are elsewhere):
// nothing fixes the block, so blockDim stays.
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
