/* klc-spec
kernel: box_wrap_rows
sizes: {H: 1024, W: 1024}
args:
  - {name: img, shape: [H, W], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
*/
// The columns clamped from 1, not from the image's first column: no match.
__global__ void box_wrap_rows(const float* img, float* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    float sum = 0.0f;
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            int yy = min(max(y + dy, 0), H - 1);
            int xx = min(max(x + dx, 1), W - 1);
            sum += img[yy * W + xx];
        }
    }
    out[y * W + x] = sum / 9.0f;
}
