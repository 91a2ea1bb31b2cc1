// RGBA pixels (uchar4) of a row-major image, the row taken from threadIdx.x: a warp reads 32
// pixels a row apart. The swap holds whatever the element type: which thread computes a
// pixel does not change what it computes.
__global__ void invert_rgba(uchar4 *dst, const uchar4 *src, int height, int width) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < height && y < width) {
        uchar4 p = src[x * width + y];
        dst[x * width + y] = make_uchar4(255 - p.x, 255 - p.y, 255 - p.z, p.w);
    }
}
void invert(uchar4 *dst, const uchar4 *src, int height, int width, cudaStream_t stream) {
    dim3 threads(16, 16);
    dim3 blocks((height + 15) / 16, (width + 15) / 16);
    invert_rgba<<<blocks, threads, 0, stream>>>(dst, src, height, width);
}
