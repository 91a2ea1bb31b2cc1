/* klc-spec
kernel: mean_filter_5x5
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 3, W: 2}
  - {H: 1, W: 7}
args:
  - {name: src, shape: [H, W], role: in, init: "uniform(0, 1)"}
  - {name: dst, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 32)", "ceil_div(ceil_div(H, 8), 4)"]
block: [32, 8]
bytes: 8 * H * W
flops: 25 * H * W
*/
// Mean filter of radius RADIUS (a 5 x 5 window) over an H x W image: dst[y, x] is the mean
// of src over the window around (y, x) clipped to the image (border pixels average fewer
// values). The expert of the window_interior lineage, written in the spelling of a first
// stencil (one output per thread, the window walked by two loops from max(y - R, 0) to
// min(y + R, H - 1), a count of the pixels met), with one optimization on top (README.md
// names the pass that removes it):
//   - the interior fast path: a pixel whose whole window lies inside the image (all but a
//     border RADIUS wide) walks the window with constant bounds, y - R to y + R, so that
//     the compiler unrolls both loops into 25 straight loads and adds, the count folds to
//     25, and no max, min or loop test runs; the border pixels keep the clipped loops.
//     In the interior max(y - R, 0) is y - R and min(y + R, H - 1) is y + R, so both
//     branches visit the same pixels in the same order.
// bytes: src read once (neighbours from L1/L2), dst written once. flops: 25 adds a pixel.
#define RADIUS 2
__global__ void mean_filter_5x5(const float* src, float* dst, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4;
    if (x >= W) return;
    for (int rr = 0; rr < 4; rr++) {
        int y = y0 + rr;
        if (y >= H) return;
        float acc = 0.0f;
        int n = 0;
        if (y >= RADIUS && y < H - RADIUS && x >= RADIUS && x < W - RADIUS) {
            for (int v = y - RADIUS; v <= y + RADIUS; v++) {
                for (int u = x - RADIUS; u <= x + RADIUS; u++) {
                    acc += src[v * W + u];
                    n++;
                }
            }
        } else {
            for (int v = max(y - RADIUS, 0); v <= min(y + RADIUS, H - 1); v++) {
                for (int u = max(x - RADIUS, 0); u <= min(x + RADIUS, W - 1); u++) {
                    acc += src[v * W + u];
                    n++;
                }
            }
        }
        dst[y * W + x] = acc / n;
    }
}
