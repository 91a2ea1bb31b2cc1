// A pointer to a row of the padded tile: its layout is used through the pointer.
__global__ void rows_through_pointer(float* out, const float* in, int n) {
    __shared__ float tile[32 * (32 + 1)];
    float* row = &tile[threadIdx.y * 33];
    row[threadIdx.x] = in[threadIdx.y * n + threadIdx.x];
    __syncthreads();
    out[threadIdx.x * n + threadIdx.y] = tile[threadIdx.x * 33 + threadIdx.y];
}
