// A block sum whose warp partials sit in a padded [ROWS][33] array.
#define ROWS 2

__global__ void block_sums(const float* x, const float* z, float* y) {
    __shared__ float part[ROWS][32];
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    float a = x[blockIdx.x * blockDim.x + threadIdx.x];
    float b = z[blockIdx.x * blockDim.x + threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) {
        a += __shfl_xor_sync(0xffffffffu, a, o);
        b += __shfl_xor_sync(0xffffffffu, b, o);
    }
    if (lane == 0) {
        part[0][warp] = a;
        part[1][warp] = b;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int w = 0; w < blockDim.x / 32; w++) s += part[0][w] * part[1][w];
        y[blockIdx.x] = s;
    }
}
