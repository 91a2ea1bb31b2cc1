/* klc-spec
kernel: mean_filter_5x5_u8
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 3, W: 2}
  - {H: 1, W: 7}
  - {H: 6, W: 5}
args:
  - {name: src, shape: [H, W], type: "unsigned char*", role: in, init: "randint(0, 256)"}
  - {name: dst, shape: [H, W], type: "unsigned char*", role: out}
  - {name: W, value: W}
  - {name: H, value: H}
grid: ["ceil_div(W, 32)", "ceil_div(H, 8)"]
block: [32, 8]
bytes: 2 * H * W
flops: 25 * H * W
*/
// Mean filter of radius R (a 5 x 5 window) over an H x W 8-bit image: dst[y, x] is the
// integer mean of the pixels of the window around (y, x) that lie inside the image (border
// pixels average fewer values). The expert of the window_interior_checked lineage, written
// in the spelling of a first image kernel (one output per thread, the window walked by
// offsets dy, dx from -R to R, each pixel added and counted only if it is inside the image),
// with one optimization on top (README.md names the pass that removes it):
//   - the interior fast path: a pixel whose whole window lies inside the image (all but a
//     border R wide) adds its window with no check, so that the compiler unrolls both loops
//     into 25 straight loads and adds and folds the count to 25; the border pixels keep the
//     checked loops. In the interior every check holds, so both branches add the same
//     pixels in the same order (an integer sum is exact in any order anyway).
// bytes: src read once (neighbours from L1/L2), dst written once, one byte each.
// flops: 25 adds a pixel.
#define R 2
__global__ void mean_filter_5x5_u8(const unsigned char* src, unsigned char* dst, int W, int H) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col >= W || row >= H) return;
    int sum = 0;
    int n = 0;
    if (row >= R && row < H - R && col >= R && col < W - R) {
        for (int dy = -R; dy <= R; dy++) {
            for (int dx = -R; dx <= R; dx++) {
                int r = row + dy;
                int c = col + dx;
                sum += src[r * W + c];
                n++;
            }
        }
    } else {
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
    }
    dst[row * W + col] = (unsigned char)(sum / n);
}
