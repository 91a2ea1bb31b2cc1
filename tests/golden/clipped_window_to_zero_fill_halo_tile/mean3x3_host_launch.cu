// A 3 x 3 mean filter launched from its own host code, the window clipped to the image and
// computed inside an if block.
__global__ void mean3x3(const float* __restrict__ img, float* __restrict__ out, int H, int W) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) {
        float sum = 0.0f;
        int count = 0;
        for (int yy = max(y - 1, 0); yy <= min(y + 1, H - 1); yy++) {
            for (int xx = max(x - 1, 0); xx <= min(x + 1, W - 1); xx++) {
                sum += img[yy * W + xx];
                count += 1;
            }
        }
        out[y * W + x] = sum / count;
    }
}

void mean3x3_launch(const float* img, float* out, int H, int W) {
    dim3 block(16, 16);
    dim3 grid((W + 15) / 16, (H + 15) / 16);
    mean3x3<<<grid, block>>>(img, out, H, W);
}
