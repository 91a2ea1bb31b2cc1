/* klc-spec
kernel: smooth_rows_inner
sizes: {H: 1024, W: 1024}
args:
  - {name: img, shape: [H, W], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
*/
// The rows clamped to H - 2, not to the image: the tile's load clamps to the image. No match.
__global__ void smooth_rows_inner(const float* img, float* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    float sum = 0.0f;
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            int yy = min(max(y + dy, 0), H - 2);
            int xx = min(max(x + dx, 0), W - 1);
            sum += 0.25f * img[yy * W + xx];
        }
    }
    out[y * W + x] = sum;
}
