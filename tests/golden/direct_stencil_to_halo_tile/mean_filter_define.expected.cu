// A 3 x 3 mean filter in the spelling of a first image kernel: the block edge a #define,
// the column index written threadIdx first, the bounds check row first, a host launch
// through dim3 variables (no klc-spec: the block comes from the launch).
#define BLOCK 16

__global__ void mean3x3(const float* __restrict__ src, float* __restrict__ dst, int width, int height) {
    __shared__ float tile[16 + 2 * 1][16 + 2 * 1];
    int col = blockIdx.x * BLOCK + threadIdx.x;
    int row = blockIdx.y * BLOCK + threadIdx.y;
    for (int ty = threadIdx.y; ty < 16 + 2 * 1; ty += BLOCK) {
        for (int tx = threadIdx.x; tx < 16 + 2 * 1; tx += BLOCK) {
            int gy = blockIdx.y * BLOCK + ty - 1;
            int gx = blockIdx.x * BLOCK + tx - 1;
            if (gy >= 0 && gy < height && gx >= 0 && gx < width) {
                tile[ty][tx] = src[gy * width + gx];
            }
        }
    }
    __syncthreads();
    if (col >= width || row >= height) return;
    float acc = 0.0f;
    float n = 0.0f;
    for (int r = max(row - 1, 0); r <= min(row + 1, height - 1); r++) {
        for (int c = max(col - 1, 0); c <= min(col + 1, width - 1); c++) {
            acc += tile[r - blockIdx.y * BLOCK + 1][c - blockIdx.x * BLOCK + 1];
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
