// The tile is also swept as a flat array: its layout is seen there.
__global__ void zero_then_copy(float* out, const float* in, int n) {
    __shared__ float tile[16 * 16];
    for (int k = threadIdx.x; k < 16 * 16; k += blockDim.x) {
        tile[k] = 0.0f;
    }
    __syncthreads();
    tile[threadIdx.y * 16 + threadIdx.x] = in[threadIdx.y * n + threadIdx.x];
    __syncthreads();
    out[threadIdx.x * n + threadIdx.y] = tile[threadIdx.x * 16 + threadIdx.y];
}
