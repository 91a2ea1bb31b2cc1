// A 3 x 3 box blur of a grayscale image in uint8_t, x and y for the column and the row, the
// thread leaving early outside the image, the kernel launched from the file's host code.
#include <stdint.h>

__global__ void boxBlur(const uint8_t* __restrict__ in, uint8_t* __restrict__ out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    int acc = 0;
    int cnt = 0;
    for (int j = -1; j <= 1; j++) {
        for (int i = -1; i <= 1; i++) {
            int yy = y + j;
            int xx = x + i;
            if (yy >= 0 && yy < h && xx >= 0 && xx < w) {
                acc += in[yy * w + xx];
                cnt++;
            }
        }
    }
    out[y * w + x] = (uint8_t)(acc / cnt);
}

void box_blur(const uint8_t* d_in, uint8_t* d_out, int w, int h) {
    dim3 block(16, 16);
    dim3 grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
    boxBlur<<<grid, block>>>(d_in, d_out, w, h);
}
