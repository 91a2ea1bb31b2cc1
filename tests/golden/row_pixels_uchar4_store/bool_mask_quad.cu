// A mask of the pixels above a level, stored as bool, four pixels of a row per thread
// (refused: a bool keeps 0 or 1 where an unsigned char keeps the value modulo 256).
__global__ void above_level(const unsigned char* __restrict__ src, bool* __restrict__ mask, int level, int W, int H) {
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    for (int k = 0; k < 4; k++) {
        int col = col0 + k;
        if (col < W && row < H) {
            int v = src[row * W + col];
            mask[row * W + col] = v - level;
        }
    }
}
