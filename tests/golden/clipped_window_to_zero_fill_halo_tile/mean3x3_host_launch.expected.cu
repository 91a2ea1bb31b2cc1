// A 3 x 3 mean filter launched from its own host code, the window clipped to the image and
// computed inside an if block.
__global__ void mean3x3(const float* __restrict__ img, float* __restrict__ out, int H, int W) {
    __shared__ float tile[16 + 2 * 1][16 + 2 * 1];
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    for (int ty = threadIdx.y; ty < 16 + 2 * 1; ty += blockDim.y) {
        for (int tx = threadIdx.x; tx < 16 + 2 * 1; tx += blockDim.x) {
            int gy = blockIdx.y * blockDim.y + ty - 1;
            int gx = blockIdx.x * blockDim.x + tx - 1;
            tile[ty][tx] = (gy >= 0 && gy < H && gx >= 0 && gx < W) ? img[gy * W + gx] : 0;
        }
    }
    __syncthreads();
    if (x >= W || y >= H) return;
    float sum = 0.0f;
    int count = 0;
    for (int yy = y - 1; yy <= y + 1; yy++) {
        for (int xx = x - 1; xx <= x + 1; xx++) {
            sum += tile[yy - blockIdx.y * blockDim.y + 1][xx - blockIdx.x * blockDim.x + 1];
        }
    }
    count += (min(y + 1, H - 1) - max(y - 1, 0) + 1) * (min(x + 1, W - 1) - max(x - 1, 0) + 1);
    out[y * W + x] = sum / count;
}

void mean3x3_launch(const float* img, float* out, int H, int W) {
    dim3 block(16, 16);
    dim3 grid((W + 15) / 16, (H + 15) / 16);
    mean3x3<<<grid, block>>>(img, out, H, W);
}
