/* klc-spec
kernel: mean_no_left_column
sizes: {H: 1024, W: 1024}
args:
  - {name: img, shape: [H, W], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
*/
// The window leaves out the image's first column (xx > 0), which a tile zero-filled only
// outside the image would add: no match.
__global__ void mean_no_left_column(const float* img, float* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    float sum = 0.0f;
    int count = 0;
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            int yy = y + dy;
            int xx = x + dx;
            if (yy >= 0 && yy < H && xx > 0 && xx < W) {
                sum += img[yy * W + xx];
                count++;
            }
        }
    }
    out[y * W + x] = sum / count;
}
