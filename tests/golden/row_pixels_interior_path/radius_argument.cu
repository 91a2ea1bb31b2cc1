// A mean of radius `rad`, a kernel argument, four pixels per thread (refused: the interior's
// loops would have no constant trip count to unroll).
__global__ void box4(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, int W, int H, int rad) {
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    for (int k = 0; k < 4; k++) {
        int col = col0 + k;
        if (col < W && row < H) {
            int sum = 0;
            int n = 0;
            for (int dy = -rad; dy <= rad; dy++) {
                for (int dx = -rad; dx <= rad; dx++) {
                    int r = row + dy;
                    int c = col + dx;
                    if (r >= 0 && r < H && c >= 0 && c < W) {
                        sum += src[r * W + c];
                        n++;
                    }
                }
            }
            dst[row * W + col] = (unsigned char)(sum / n);
        }
    }
}
