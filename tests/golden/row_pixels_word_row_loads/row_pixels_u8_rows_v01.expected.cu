/* klc-spec
kernel: mean_filter_3x3_u8_rows
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 100}
  - {H: 37, W: 101}
  - {H: 19, W: 130}
  - {H: 9, W: 12}
  - {H: 3, W: 5}
  - {H: 1, W: 7}
  - {H: 6, W: 2}
args:
  - {name: src, shape: [H, W], type: "unsigned char*", role: in, init: "randint(0, 256)"}
  - {name: dst, shape: [H, W], type: "unsigned char*", role: out}
  - {name: W, value: W}
  - {name: H, value: H}
grid: ["ceil_div(W, 32 * 4)", "ceil_div(H, 8 * 4)"]
block: [32, 8]
bytes: 2 * H * W
flops: 9 * H * W
*/
// A 3 x 3 mean filter over an H x W 8-bit image: dst[y, x] is the integer mean of the pixels
// of the window around (y, x) that lie inside the image (a border pixel averages fewer
// values). The expert of the row_pixels_u8_rows lineage: the row_pixels_u8 expert (four
// horizontally adjacent pixels per thread, the uchar4 store, the interior path of the four
// pixels, the window walked by offsets dy, dx from -R to R and checked pixel by pixel) at a
// 32 x 8 block, with these optimizations on top (README.md names the pass that removes each):
//   - ROWS vertically adjacent rows of four pixels per thread, on a grid ROWS times shorter;
//   - the row sums in registers: a thread whose ROWS rows of four pixels have their windows
//     inside the image loads each of the ROWS + 2R image rows its windows cover once, keeps
//     each column's horizontal sum hs[v][k] (the pixels col0 + k - R .. col0 + k + R of image
//     row row0 - R + v) in a register, and adds 2R + 1 of them per output pixel;
//   - one 32-bit load per image row: where the rows start 4-byte aligned (W a multiple of 4
//     and both pointers aligned, tested at run time), the four pixels of a row are read as one
//     32-bit word (pixel col0 + k in its byte k: the load is little-endian) and its two
//     neighbours p[-1], p[4] as bytes, and each output row of four pixels is stored as one
//     uchar4 with no further test.
// The other threads compute their rows one at a time with the row_pixels_u8 expert's code.
// The count n of the pixels met stays the divisor (9 inside the image), so the integer means
// are the first version's exactly. bytes: src read once (neighbours from registers, L1 or
// L2), dst written once, one byte each. flops: 9 adds a pixel.
#define R 1
#define PX 4
#define ROWS 4
__global__ void mean_filter_3x3_u8_rows(const unsigned char* src, unsigned char* dst, int W, int H) {
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * PX;
    int row0 = (blockIdx.y * blockDim.y + threadIdx.y) * ROWS;
    if (row0 >= R && row0 + ROWS + R <= H && col0 >= R && col0 + PX + R <= W && W % 4 == 0
        && ((reinterpret_cast<unsigned long long>(src)
             | reinterpret_cast<unsigned long long>(dst)) & 3) == 0) {
        int hs[ROWS + 2 * R][PX];
        for (int v = 0; v < ROWS + 2 * R; v++) {
            const unsigned char* p = &src[(row0 - R + v) * W + col0];
            unsigned int word = *reinterpret_cast<const unsigned int*>(p);
            int left = p[-1];
            int right = p[4];
            hs[v][0] = left + (word & 255) + ((word >> 8) & 255);
            hs[v][1] = (word & 255) + ((word >> 8) & 255) + ((word >> 16) & 255);
            hs[v][2] = ((word >> 8) & 255) + ((word >> 16) & 255) + (word >> 24);
            hs[v][3] = ((word >> 16) & 255) + (word >> 24) + right;
        }
        for (int rr = 0; rr < ROWS; rr++) {
            int row = row0 + rr;
            unsigned char res[PX];
            for (int k = 0; k < PX; k++) {
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
            *reinterpret_cast<uchar4*>(&dst[row * W + col0]) = make_uchar4(res[0], res[1], res[2], res[3]);
        }
    } else {
        for (int rr = 0; rr < ROWS; rr++) {
            int row = row0 + rr;
            if (row >= H) return;
            unsigned char res[PX];
            if (row >= R && row < H - R && col0 >= R && col0 + PX <= W - R) {
                for (int k = 0; k < PX; k++) {
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
                for (int k = 0; k < PX; k++) {
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
            if (row < H && col0 + PX <= W
                && (reinterpret_cast<unsigned long long>(&dst[row * W + col0]) & 3) == 0) {
                *reinterpret_cast<uchar4*>(&dst[row * W + col0]) = make_uchar4(res[0], res[1], res[2], res[3]);
            } else {
                for (int k = 0; k < PX; k++) {
                    int col = col0 + k;
                    if (col < W && row < H) {
                        dst[row * W + col] = res[k];
                    }
                }
            }
        }
    }
}
