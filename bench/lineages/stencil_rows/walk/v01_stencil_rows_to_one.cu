/* klc-spec
kernel: box_blur_rows
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 5, W: 7}
  - {H: 1, W: 2}
args:
  - {name: src, shape: [H, W], role: in, init: "uniform(0, 255)"}
  - {name: dst, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "(ceil_div(H, 16 * 4)) * 4"]
block: [16, 16]
bytes: 8 * H * W
flops: 9 * H * W
*/
// 3 x 3 box blur over an H x W float image: dst[y, x] is the mean of src over the window of
// radius RADIUS around (y, x) clipped to the image (edge pixels average 6 values, corners
// 4). The expert of the stencil_rows lineage, in the spelling of a first stencil (the window
// walked from max(y - R, 0) to min(y + R, H - 1), a count of the pixels met), with these
// optimizations on top (README.md names the passes that remove them):
//   - rows per thread: every thread computes ROWS vertically adjacent output rows of its
//     column, (blockIdx.y * blockDim.y + threadIdx.y) * ROWS + r, on a grid ROWS times
//     shorter, with no shared tile: the window rows that adjacent outputs share (two of
//     three) come from the thread's registers or its L1 lines, and the index arithmetic and
//     the column's check are paid once for ROWS pixels;
//   - the interior fast path: a pixel whose whole window lies inside the image walks it
//     with constant bounds, which the compiler unrolls (nine loads and adds, a count of 9);
//     the border keeps the clipped loops;
//   - __restrict__ and const pointers: the loads of one row may be kept across the stores
//     of the previous ones.
// bytes: src read once (neighbours from registers, L1 or L2), dst written once. flops: 8
// adds and a divide per pixel.
#define RADIUS 1
#define ROWS 4
__global__ void box_blur_rows(const float* __restrict__ src, float* __restrict__ dst, int H,
                              int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
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
