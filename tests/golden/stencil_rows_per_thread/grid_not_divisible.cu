/* klc-spec
kernel: box_blur_floor_grid
sizes: {H: 2048, W: 2048}
verify_sizes:
  - {H: 40, W: 48}
args:
  - {name: img, shape: [H, W], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["W // 16", "H // 16"]
block: [16, 16]
*/
// A box blur launched on a grid of whole blocks (H / 16, rounded down): at 40 rows its 2
// block rows compute rows 0 .. 31 and leave the last 8 alone, and 2 is not a multiple of 4
// (refused: a grid 4 times shorter, rounded up, would compute rows 32 .. 39 too).

__global__ void box_blur_floor_grid(const float* img, float* out, int H, int W) {
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
