// A padded square tile loses its padding column.
__global__ void t(const float* src, float* dst) {
    __shared__ float tile[32][32];
    tile[threadIdx.y][threadIdx.x] = src[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();
    dst[threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
