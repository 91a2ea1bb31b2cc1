// A 32 x 32 block in dim3 variables: the bound is the site's 1024 threads, not the 256 the
// skill's default holds.
__global__ void scale2d(float *out, const float *in, int w, int h, float s) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = s * in[y * w + x];
}
void launch(float *out, const float *in, int w, int h, float s) {
    dim3 block(32, 32);
    dim3 grid((w + 31) / 32, (h + 31) / 32);
    scale2d<<<grid, block>>>(out, in, w, h, s);
}
