// The horizontal gradient of a signed 8-bit image (int8_t), four pixels of a row per thread,
// each the halved difference of its neighbours (in the type's range).
#include <stdint.h>
__global__ void grad_x_i8(const int8_t* __restrict__ src, int8_t* __restrict__ dst, int W, int H) {
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned char res[4];
    for (int k = 0; k < 4; k++) {
        int col = col0 + k;
        if (col < W && row < H) {
            int l = col > 0 ? src[row * W + col - 1] : src[row * W + col];
            int r = col + 1 < W ? src[row * W + col + 1] : src[row * W + col];
            int g = (r - l) / 2;
            res[k] = (int8_t)g;
        }
    }
    if (row < H && col0 + 4 <= W
        && (reinterpret_cast<unsigned long long>(&dst[row * W + col0]) & 3) == 0) {
        *reinterpret_cast<uchar4*>(&dst[row * W + col0]) = make_uchar4(res[0], res[1], res[2], res[3]);
    } else {
        for (int k = 0; k < 4; k++) {
            int col = col0 + k;
            if (col < W && row < H) {
                dst[row * W + col] = res[k];
            }
        }
    }
}
