/* klc-spec
kernel: mean3
sizes: {H: 256, W: 256, D: 2}
args:
  - {name: img, shape: [D, H, W], role: in, init: "randint(0, 256)"}
  - {name: out, shape: [D, H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)", 1]
block: [16, 16, 2]
*/
// Refused: the block has two layers along z; the tile is sized and loaded for one layer of
// BX x BY threads (the second layer's threads would load and read the same tile).
__global__ void mean3(const unsigned char* img, unsigned char* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    int sum = 0;
    int n = 0;
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            int yy = y + dy;
            int xx = x + dx;
            if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
                sum += img[yy * W + xx];
                n++;
            }
        }
    }
    out[y * W + x] = (unsigned char)(sum / n);
}
