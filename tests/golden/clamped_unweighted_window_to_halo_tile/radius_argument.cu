/* klc-spec
kernel: box_radius
sizes: {H: 1024, W: 1024}
args:
  - {name: img, shape: [H, W], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
  - {name: r, value: 2}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
*/
// The radius comes with the launch: the tile's halo would need it at compile time. Refused.
__global__ void box_radius(const float* img, float* out, int H, int W, int r) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    float sum = 0.0f;
    for (int dy = -r; dy <= r; dy++) {
        for (int dx = -r; dx <= r; dx++) {
            int yy = min(max(y + dy, 0), H - 1);
            int xx = min(max(x + dx, 0), W - 1);
            sum += img[yy * W + xx];
        }
    }
    out[y * W + x] = sum / ((2 * r + 1) * (2 * r + 1));
}
