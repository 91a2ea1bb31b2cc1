/* klc-spec
kernel: conv_skip
sizes: {H: 512, W: 512}
args:
  - {name: img, shape: [H, W], role: in, init: normal}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
*/
// Refused: the loop body moves its own column offset (a sparse window that skips every
// other column by advancing dx): the offsets leave [-R, R], and the window may leave the tile.
__global__ void conv_skip(const float* img, float* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    float acc = 0.0f;
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            int yy = y + dy;
            int xx = x + dx;
            if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
                acc += 0.5f * img[yy * W + xx];
                dx += 1;
            }
        }
    }
    out[y * W + x] = acc;
}
