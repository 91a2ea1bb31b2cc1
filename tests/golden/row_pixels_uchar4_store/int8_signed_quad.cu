// The horizontal gradient of a signed 8-bit image (int8_t), four pixels of a row per thread,
// each the halved difference of its neighbours (in the type's range).
#include <stdint.h>
__global__ void grad_x_i8(const int8_t* __restrict__ src, int8_t* __restrict__ dst, int W, int H) {
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    for (int k = 0; k < 4; k++) {
        int col = col0 + k;
        if (col < W && row < H) {
            int l = col > 0 ? src[row * W + col - 1] : src[row * W + col];
            int r = col + 1 < W ? src[row * W + col + 1] : src[row * W + col];
            int g = (r - l) / 2;
            dst[row * W + col] = (int8_t)g;
        }
    }
}
