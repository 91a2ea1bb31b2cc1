// A 3 x 3 box blur of a grayscale image in uint8_t, x and y for the column and the row, each
// thread computing four pixels of its row and storing each as a byte.
#include <stdint.h>

__global__ void boxBlur(const uint8_t* __restrict__ in, uint8_t* __restrict__ out, int w, int h) {
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y >= 1 && y < h - 1 && col0 >= 1 && col0 + 4 <= w - 1) {
        for (int k = 0; k < 4; k++) {
            int x = col0 + k;
            int acc = 0;
            int cnt = 0;
            for (int j = -1; j <= 1; j++) {
                for (int i = -1; i <= 1; i++) {
                    int yy = y + j;
                    int xx = x + i;
                    acc += in[yy * w + xx];
                    cnt++;
                }
            }
            out[y * w + x] = (uint8_t)(acc / cnt);
        }
    } else {
        for (int k = 0; k < 4; k++) {
            int x = col0 + k;
            if (x < w && y < h) {
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
        }
    }
}

void box_blur(const uint8_t* d_in, uint8_t* d_out, int w, int h) {
    dim3 block(16, 16);
    dim3 grid((w + block.x * 4 - 1) / (block.x * 4), (h + block.y - 1) / block.y);
    boxBlur<<<grid, block>>>(d_in, d_out, w, h);
}
