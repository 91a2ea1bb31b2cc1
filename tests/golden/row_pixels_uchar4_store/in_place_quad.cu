// An 8-bit sharpen of a row in place, four pixels per thread, each reading its neighbours from
// the image it writes (refused: storing the four bytes after the loop instead of each in it
// changes what the thread's later pixels read).
__global__ void sharpen_row_u8(unsigned char* img, int W, int H) {
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    for (int k = 0; k < 4; k++) {
        int col = col0 + k;
        if (col < W && row < H) {
            int left = col > 0 ? img[row * W + col - 1] : img[row * W + col];
            int v = 2 * img[row * W + col] - left;
            img[row * W + col] = (unsigned char)min(max(v, 0), 255);
        }
    }
}
