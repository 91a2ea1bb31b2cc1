// A 3 x 3 box blur of a grayscale image in uint8_t, x and y for the column and the row, each
// thread computing four pixels of its row, the kernel launched from the file's host code.
#include <stdint.h>

__global__ void boxBlur(const uint8_t* __restrict__ in, uint8_t* __restrict__ out, int w, int h) {
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned char res[4];
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
            res[k] = (uint8_t)(acc / cnt);
        }
    }
    if (y < h && col0 + 4 <= w
        && (reinterpret_cast<unsigned long long>(&out[y * w + col0]) & 3) == 0) {
        *reinterpret_cast<uchar4*>(&out[y * w + col0]) = make_uchar4(res[0], res[1], res[2], res[3]);
    } else {
        for (int k = 0; k < 4; k++) {
            int x = col0 + k;
            if (x < w && y < h) {
                out[y * w + x] = res[k];
            }
        }
    }
}

void box_blur(const uint8_t* d_in, uint8_t* d_out, int w, int h) {
    dim3 block(16, 16);
    dim3 grid((w + block.x * 4 - 1) / (block.x * 4), (h + block.y - 1) / block.y);
    boxBlur<<<grid, block>>>(d_in, d_out, w, h);
}
