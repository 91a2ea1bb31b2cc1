// A per-pixel kernel whose pixel reads its thread's lane (refused: with several pixels per
// thread the lane no longer names the pixel).
__global__ void lane_tag(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, int W, int H) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col < W && row < H) {
        dst[row * W + col] = src[row * W + col] ^ (unsigned char)(threadIdx.x & 31);
    }
}
