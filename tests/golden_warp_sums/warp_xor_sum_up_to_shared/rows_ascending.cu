// A warp per row, the butterfly's offsets going up to the warp size.
#define WARP_SIZE 32

__global__ void row_norms(const float* x, float* y, int cols) {
    const int row = blockIdx.x;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += WARP_SIZE) s += x[row * cols + c] * x[row * cols + c];
    for (int i = 1; i < WARP_SIZE; i *= 2) s += __shfl_xor_sync(0xffffffffu, s, i);
    if (threadIdx.x == 0) y[row] = sqrtf(s);
}
