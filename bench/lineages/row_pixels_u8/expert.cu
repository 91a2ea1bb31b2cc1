/* klc-spec
kernel: mean_filter_3x3_u8_x4
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 3, W: 5}
  - {H: 1, W: 7}
  - {H: 6, W: 2}
args:
  - {name: src, shape: [H, W], type: "unsigned char*", role: in, init: "randint(0, 256)"}
  - {name: dst, shape: [H, W], type: "unsigned char*", role: out}
  - {name: W, value: W}
  - {name: H, value: H}
grid: ["ceil_div(W, 64)", "ceil_div(H, 8)"]
block: [16, 8]
bytes: 2 * H * W
flops: 9 * H * W
*/
// A 3 x 3 mean filter over an H x W 8-bit image: dst[y, x] is the integer mean of the pixels
// of the window around (y, x) that lie inside the image (a border pixel averages fewer
// values). The expert of the row_pixels_u8 lineage, written in the spelling of a first image
// kernel (the window walked by offsets dy, dx from -R to R, each pixel added and counted only
// if it is inside the image), with these optimizations on top (README.md names the pass that
// removes each):
//   - four horizontally adjacent pixels per thread: thread t of a row computes the columns
//     4t .. 4t + 3 in a loop of four (unrolled by the compiler), each still checked against
//     the image, on a grid a quarter as wide: the index arithmetic and the row's checks are
//     paid once for four pixels;
//   - one 32-bit store of the four bytes: the results wait in a register array and leave as
//     one uchar4 where the four columns are in the row and the address is 4-byte aligned
//     (every row when W is a multiple of 4), one byte at a time elsewhere;
//   - the interior fast path of the thread's four pixels: where all four windows lie inside
//     the image (its row and its four columns at least R from every edge), they are
//     added with no check: the compiler unrolls the loops, folds each count to 9 and loads
//     the pixels the neighbouring windows share once (18 byte loads for four pixels instead
//     of 36); the other threads keep the checked loop.
// bytes: src read once (neighbours from L1/L2), dst written once, one byte each.
// flops: 9 adds a pixel.
#define R 1
#define PX 4
__global__ void mean_filter_3x3_u8_x4(const unsigned char* src, unsigned char* dst, int W, int H) {
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * PX;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
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
