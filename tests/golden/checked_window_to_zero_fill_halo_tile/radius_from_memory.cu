/* klc-spec
kernel: mean_radius_table
sizes: {H: 1024, W: 1024}
args:
  - {name: img, shape: [H, W], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [H, W], role: out}
  - {name: radius, shape: [1], role: in, init: "randint(1, 3)"}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
*/
// The radius is read from memory at run time: no tile extent can hold its halo. Refused.
__global__ void mean_radius_table(const float* img, float* out, const int* radius, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    const int r = radius[0];
    float sum = 0.0f;
    int count = 0;
    for (int dy = -r; dy <= r; dy++) {
        for (int dx = -r; dx <= r; dx++) {
            int yy = y + dy;
            int xx = x + dx;
            if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
                sum += img[yy * W + xx];
                count++;
            }
        }
    }
    out[y * W + x] = sum / count;
}
