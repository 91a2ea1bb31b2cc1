// x from threadIdx.x is the column here (C[y * width + x]): the warp already walks a row.
// The role swap would make it worse; it is refused.
__global__ void scale_rows(float *out, const float *in, const float *s, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        out[y * width + x] = in[y * width + x] * s[y];
    }
}
void launch(float *out, const float *in, const float *s, int w, int h) {
    dim3 block(16, 16);
    dim3 grid((w + 15) / 16, (h + 15) / 16);
    scale_rows<<<grid, block>>>(out, in, s, w, h);
}
