/* klc-spec
kernel: box_blur_3x3
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 1, W: 2}
args:
  - {name: img, shape: [H, W], role: in, init: "uniform(0, 255)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(ceil_div(H, 16), 4)"]
block: [16, 16]
bytes: 8 * H * W
flops: 9 * H * W
*/
// The transfer set's blur_3x3 after the stencil_rows skills (rows per thread, the interior
// rows, unrolled): literal radius and rows, the image's own names (img, sum, count, yy, xx).
// family: stencil
// style: 2D image, x and y naming, min/max clamping, nested loops over the window, count of valid neighbours (edges average fewer pixels)
// 3 x 3 box blur: out[y, x] = mean of img over the 3 x 3 window around (y, x) clipped to the
// image (edge pixels average 4 or 6 values, corners 4).
// bytes: img read once, out written. flops: 8 adds and a divide per pixel.
__global__ void box_blur_3x3(const float* __restrict__ img, float* __restrict__ out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4;
    if (x >= W) return;
    if (y0 >= 1 && y0 + 4 + 1 <= H && x >= 1 && x + 1 < W) {
        float hs[4 + 2 * 1];
        #pragma unroll
        for (int k = 0; k < 4 + 2 * 1; k++) {
            int yy = y0 - 1 + k;
            hs[k] = 0.0f;
            for (int xx = x - 1; xx <= x + 1; xx++) {
                hs[k] += img[yy * W + xx];
            }
        }
        #pragma unroll
        for (int rr = 0; rr < 4; rr++) {
            int y = y0 + rr;
            float sum = 0.0f;
            int count = 0;
            for (int dv = -1; dv <= 1; dv++) {
                sum += hs[rr + 1 + dv];
                for (int du = -1; du <= 1; du++) {
                    count++;
                }
            }
            out[y * W + x] = sum / count;
        }
    } else {
        #pragma unroll
        for (int rr = 0; rr < 4; rr++) {
            int y = y0 + rr;
            if (y >= H) return;
            float sum = 0.0f;
            int count = 0;
            for (int yy = max(y - 1, 0); yy <= min(y + 1, H - 1); yy++) {
                for (int xx = max(x - 1, 0); xx <= min(x + 1, W - 1); xx++) {
                    sum += img[yy * W + xx];
                    count++;
                }
            }
            out[y * W + x] = sum / count;
        }
    }
}
