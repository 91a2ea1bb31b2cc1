/* klc-spec
kernel: smooth_in_place
sizes: {H: 1024, W: 1024}
args:
  - {name: img, shape: [H, W], role: inout, init: "uniform(0, 1)"}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
*/
// The result written over the input. Refused.
__global__ void smooth_in_place(float* img, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    float sum = 0.0f;
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            int yy = min(max(y + dy, 0), H - 1);
            int xx = min(max(x + dx, 0), W - 1);
            sum += 0.25f * img[yy * W + xx];
        }
    }
    img[y * W + x] = sum;
}
