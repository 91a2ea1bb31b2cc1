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
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
bytes: 8 * H * W
flops: 9 * H * W
*/
// family: stencil
// style: 2D image, x and y naming, min/max clamping, nested loops over the window, count of valid neighbours (edges average fewer pixels)
// 3 x 3 box blur: out[y, x] = mean of img over the 3 x 3 window around (y, x) clipped to the
// image (edge pixels average 4 or 6 values, corners 4).
// bytes: img read once, out written. flops: 8 adds and a divide per pixel.
__global__ void box_blur_3x3(const float* img, float* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
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
