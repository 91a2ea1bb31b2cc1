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
// The transfer blur with its rows per thread and a row that stops the thread's later rows
// (refused: the rows' statements must reach their end).
__global__ void box_blur_3x3(const float* img, float* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4;
    if (x >= W) return;
    for (int rr = 0; rr < 4; rr++) {
        int y = y0 + rr;
        if (y >= H) return;
        float sum = 0.0f;
        int count = 0;
        if (img[y * W + x] < 0.0f) break;
        for (int yy = max(y - 1, 0); yy <= min(y + 1, H - 1); yy++) {
            for (int xx = max(x - 1, 0); xx <= min(x + 1, W - 1); xx++) {
                sum += img[yy * W + xx];
                count++;
            }
        }
        out[y * W + x] = sum / count;
    }
}
