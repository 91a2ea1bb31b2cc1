// A 3 x 3 mean filter in the spelling of a first image kernel: the block edge a #define,
// the column index written threadIdx first, the bounds check row first, a host launch
// through dim3 variables (no klc-spec: the block comes from the launch).
#define BLOCK 16

__global__ void mean3x3(const float* __restrict__ src, float* __restrict__ dst, int width, int height) {
    int col = threadIdx.x + BLOCK * blockIdx.x;
    int row = threadIdx.y + BLOCK * blockIdx.y;
    if (row >= height || col >= width) return;
    float acc = 0.0f;
    float n = 0.0f;
    for (int r = max(row - 1, 0); r <= min(row + 1, height - 1); r++) {
        for (int c = max(col - 1, 0); c <= min(col + 1, width - 1); c++) {
            acc += src[r * width + c];
            n += 1.0f;
        }
    }
    dst[row * width + col] = acc / n;
}

void mean3x3_launch(const float* src, float* dst, int width, int height) {
    dim3 block(BLOCK, BLOCK);
    dim3 grid((width + BLOCK - 1) / BLOCK, (height + BLOCK - 1) / BLOCK);
    mean3x3<<<grid, block>>>(src, dst, width, height);
}
