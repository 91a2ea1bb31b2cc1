// A warp per row, the butterfly's offsets going up to the warp size.
#define WARP_SIZE 32

__global__ void row_norms(const float* x, float* y, int cols) {
    const int row = blockIdx.x;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += WARP_SIZE) s += x[row * cols + c] * x[row * cols + c];
    {
        __shared__ decltype(0 + s) klc_lanes[1024];
        const int klc_t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        __syncwarp(0xffffffffu);
        klc_lanes[klc_t] = s;
        __syncwarp(0xffffffffu);
        s = 0;
        for (int i = 0; i < WARP_SIZE; i++) {
            s += klc_lanes[(klc_t & ~31) + i];
        }
        __syncwarp(0xffffffffu);
    }
    if (threadIdx.x == 0) y[row] = sqrtf(s);
}
