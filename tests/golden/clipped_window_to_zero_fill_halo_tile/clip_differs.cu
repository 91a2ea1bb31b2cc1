/* klc-spec
kernel: mean_inner_rows
sizes: {H: 1024, W: 1024}
args:
  - {name: img, shape: [H, W], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
*/
// The window's rows clipped one short of the image's last row: a zero-filled tile would
// give that row's pixels to the sum, which the window never adds. No match.
__global__ void mean_inner_rows(const float* img, float* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    float sum = 0.0f;
    int count = 0;
    for (int yy = max(y - 1, 0); yy <= min(y + 1, H - 2); yy++) {
        for (int xx = max(x - 1, 0); xx <= min(x + 1, W - 1); xx++) {
            sum += img[yy * W + xx];
            count++;
        }
    }
    out[y * W + x] = sum / count;
}
