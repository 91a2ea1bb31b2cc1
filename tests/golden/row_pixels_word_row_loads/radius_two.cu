/* klc-spec
kernel: mean_filter_u8
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 3, W: 5}
args:
  - {name: src, shape: [H, W], role: in, init: "uniform(0, 255)"}
  - {name: dst, shape: [H, W], role: out}
  - {name: W, value: W}
  - {name: H, value: H}
grid: ["ceil_div(ceil_div(W, 16), 4)", "ceil_div(ceil_div(H, 16), 4)"]
block: [16, 16]
bytes: 2 * H * W
flops: 9 * H * W
*/
// A 5 x 5 mean filter on an unsigned char image: the window's pixels checked against the
// image one by one, the count of those inside as the divisor.
// bench/spellings/mean_filter_u8.cu after the row_pixels_u8 recipe,
// row_pixels_rows_per_thread and row_pixels_row_sums, with a radius of 2 (a 5 x 5 mean): a
// 32-bit word and its two neighbours make the row sums of radius 1 only.
#define R 2

__global__ void mean_filter_u8(const unsigned char* src, unsigned char* dst, int W, int H) {
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int row0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4;
    if (row0 >= R && row0 + 4 + R <= H && col0 >= R && col0 + 4 + R <= W) {
        int hs[4 + 2 * R][4];
        for (int v = 0; v < 4 + 2 * R; v++) {
            for (int k = 0; k < 4; k++) {
                hs[v][k] = 0;
                for (int dx = -R; dx <= R; dx++) {
                    hs[v][k] += src[(row0 - R + v) * W + col0 + k + dx];
                }
            }
        }
        for (int rr = 0; rr < 4; rr++) {
            int row = row0 + rr;
            unsigned char res[4];
            for (int k = 0; k < 4; k++) {
                int sum = 0;
                int n = 0;
                for (int dy = -R; dy <= R; dy++) {
                    sum += hs[rr + R + dy][k];
                    for (int dx = -R; dx <= R; dx++) {
                        n++;
                    }
                }
                res[k] = (unsigned char)(sum / n);
            }
            if (row < H && col0 + 4 <= W
                && (reinterpret_cast<unsigned long long>(&dst[row * W + col0]) & 3) == 0) {
                *reinterpret_cast<uchar4*>(&dst[row * W + col0]) = make_uchar4(res[0], res[1], res[2], res[3]);
            } else {
                for (int k = 0; k < 4; k++) {
                    if (col0 + k < W && row < H) {
                        dst[row * W + col0 + k] = res[k];
                    }
                }
            }
        }
    } else {
        for (int rr = 0; rr < 4; rr++) {
            int row = row0 + rr;
            if (row >= H) return;
            unsigned char res[4];
            if (row >= R && row < H - R && col0 >= R && col0 + 4 <= W - R) {
                for (int k = 0; k < 4; k++) {
                    int col = col0 + k;
                    int sum = 0;
                    int n = 0;
                    for (int dy = -R; dy <= R; dy++) {
                        for (int dx = -R; dx <= R; dx++) {
                            int r = row + dy;
                            int c = col + dx;
                            sum += src[r * W + c];
                            n++;
                        }
                    }
                    res[k] = (unsigned char)(sum / n);
                }
            } else {
                for (int k = 0; k < 4; k++) {
                    int col = col0 + k;
                    if (col < W && row < H) {
                        int sum = 0;
                        int n = 0;
                        for (int dy = -R; dy <= R; dy++) {
                            for (int dx = -R; dx <= R; dx++) {
                                int r = row + dy;
                                int c = col + dx;
                                if (r >= 0 && r < H && c >= 0 && c < W) {
                                    sum += src[r * W + c];
                                    n++;
                                }
                            }
                        }
                        res[k] = (unsigned char)(sum / n);
                    }
                }
            }
            if (row < H && col0 + 4 <= W
                && (reinterpret_cast<unsigned long long>(&dst[row * W + col0]) & 3) == 0) {
                *reinterpret_cast<uchar4*>(&dst[row * W + col0]) = make_uchar4(res[0], res[1], res[2], res[3]);
            } else {
                for (int k = 0; k < 4; k++) {
                    int col = col0 + k;
                    if (col < W && row < H) {
                        dst[row * W + col] = res[k];
                    }
                }
            }
        }
    }
}
