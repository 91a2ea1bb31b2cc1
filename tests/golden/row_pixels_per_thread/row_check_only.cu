// An 8-bit invert whose threads check the row only: the grid covers W exactly (W a multiple
// of the block's width), so no column check bounds a thread's pixels (no match: with several
// pixels per thread the last ones of a row would need a tail the kernel does not have).
__global__ void invert_u8(const unsigned char* src, unsigned char* dst, int W, int H) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < H) {
        dst[row * W + col] = 255 - src[row * W + col];
    }
}
