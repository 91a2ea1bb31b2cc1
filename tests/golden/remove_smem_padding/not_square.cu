// A 32 x 9 array: the last column may be real data, not padding. The rule must refuse.
__global__ void t(const float* src, float* dst) {
    __shared__ float tile[32][8 + 1];
    tile[threadIdx.x][threadIdx.y] = src[threadIdx.x * 9 + threadIdx.y];
    __syncthreads();
    dst[threadIdx.x * 9 + threadIdx.y] = tile[threadIdx.x][8 - threadIdx.y];
}
