// One access walks the tile as a flat array, pad elements included.
__global__ void clear_and_fill(float* out, const float* in, int n) {
    __shared__ float tile[32 * (32 + 1)];
    for (int k = threadIdx.x; k < 32 * 33; k += blockDim.x) {
        tile[k] = 0.0f;
    }
    __syncthreads();
    tile[threadIdx.y * 33 + threadIdx.x] = in[threadIdx.y * n + threadIdx.x];
    __syncthreads();
    out[threadIdx.x * n + threadIdx.y] = tile[threadIdx.x * 33 + threadIdx.y];
}
