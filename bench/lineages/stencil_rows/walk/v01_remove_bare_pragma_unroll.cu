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
grid: ["ceil_div(W, 16)", "ceil_div(H, 16 * 4)"]
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
//     column, y0 + rr with y0 = (blockIdx.y * blockDim.y + threadIdx.y) * ROWS, on a grid
//     ROWS times shorter, with no shared tile: the index arithmetic and the column's check
//     are paid once for ROWS pixels, and the loops over the rows are unrolled
//     (#pragma unroll), so that the loads of the ROWS windows are in flight together;
//   - the interior fast path of a thread's rows: a thread whose rows all have their whole
//     window inside the image (y0 >= R, y0 + ROWS + R <= H, and its column R from the
//     sides) walks every window with constant bounds and no row check: the compiler unrolls
//     the rows and the windows into straight loads, and, the source __restrict__, loads each
//     of the ROWS + 2R image rows the windows share once (6 rows of 3 pixels for 4 outputs,
//     where one output per thread loads 9 pixels each). The other threads keep the clipped
//     loops and the row check;
//   - __restrict__ and const pointers: the stores of one row do not make the compiler load
//     the shared window rows again for the next.
// bytes: src read once (neighbours from registers, L1 or L2), dst written once. flops: 8
// adds and a divide per pixel.
#define RADIUS 1
#define ROWS 4
__global__ void box_blur_rows(const float* __restrict__ src, float* __restrict__ dst, int H,
                              int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * ROWS;
    if (x >= W) return;
    if (y0 >= RADIUS && y0 + ROWS + RADIUS <= H && x >= RADIUS && x + RADIUS < W) {
        for (int rr = 0; rr < ROWS; rr++) {
            int y = y0 + rr;
            float acc = 0.0f;
            int n = 0;
            for (int dv = -RADIUS; dv <= RADIUS; dv++) {
                for (int du = -RADIUS; du <= RADIUS; du++) {
                    int v = y + dv;
                    int u = x + du;
                    acc += src[v * W + u];
                    n++;
                }
            }
            dst[y * W + x] = acc / n;
        }
    } else {
        #pragma unroll
        for (int rr = 0; rr < ROWS; rr++) {
            int y = y0 + rr;
            if (y >= H) return;
            float acc = 0.0f;
            int n = 0;
            for (int v = max(y - RADIUS, 0); v <= min(y + RADIUS, H - 1); v++) {
                for (int u = max(x - RADIUS, 0); u <= min(x + RADIUS, W - 1); u++) {
                    acc += src[v * W + u];
                    n++;
                }
            }
            dst[y * W + x] = acc / n;
        }
    }
}
