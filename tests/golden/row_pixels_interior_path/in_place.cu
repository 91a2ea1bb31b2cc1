// A 3 x 3 mean, four pixels per thread, whose window reads the image it writes (refused: the
// pixels a window reads may already hold other threads' means).
__global__ void box4(unsigned char* dst, int W, int H) {
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    for (int k = 0; k < 4; k++) {
        int col = col0 + k;
        if (col < W && row < H) {
            int sum = 0;
            int n = 0;
            for (int dy = -1; dy <= 1; dy++) {
                for (int dx = -1; dx <= 1; dx++) {
                    int r = row + dy;
                    int c = col + dx;
                    if (r >= 0 && r < H && c >= 0 && c < W) {
                        sum += dst[r * W + c];
                        n++;
                    }
                }
            }
            dst[row * W + col] = (unsigned char)(sum / n);
        }
    }
}
