/* klc-spec
kernel: box_blur_in_place
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 1, W: 2}
args:
  - {name: img, shape: [H, W], role: inout, init: "uniform(0, 255)"}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(ceil_div(H, 16), 4)"]
block: [16, 16]
bytes: 8 * H * W
flops: 9 * H * W
*/
// Refused: the blur in place (img read and written): the row sums read every row before
// the first store, where each output row's window read the rows stored before it.
__global__ void box_blur_in_place(float* img, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4;
    if (x >= W) return;
    if (y0 >= 1 && y0 + 4 + 1 <= H && x >= 1 && x + 1 < W) {
        #pragma unroll
        for (int rr = 0; rr < 4; rr++) {
            int y = y0 + rr;
            float sum = 0.0f;
            int count = 0;
            for (int dv = -1; dv <= 1; dv++) {
                for (int du = -1; du <= 1; du++) {
                    int yy = y + dv;
                    int xx = x + du;
                    sum += img[yy * W + xx];
                    count++;
                }
            }
            img[y * W + x] = sum / count;
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
            img[y * W + x] = sum / count;
        }
    }
}
