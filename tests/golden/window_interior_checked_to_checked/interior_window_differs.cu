/* klc-spec
kernel: mean_filter_5x5_u8
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 3, W: 2}
  - {H: 1, W: 7}
  - {H: 6, W: 5}
args:
  - {name: src, shape: [H, W], type: "unsigned char*", role: in, init: "randint(0, 256)"}
  - {name: dst, shape: [H, W], type: "unsigned char*", role: out}
  - {name: W, value: W}
  - {name: H, value: H}
grid: ["ceil_div(W, 32)", "ceil_div(H, 8)"]
block: [32, 8]
bytes: 2 * H * W
flops: 25 * H * W
*/
// A 5 x 5 mean filter whose interior path skips the window's last row (no match: the two
// branches add different pixels, so no single checked window replaces them).
#define R 2
__global__ void mean_filter_5x5_u8(const unsigned char* src, unsigned char* dst, int W, int H) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col >= W || row >= H) return;
    int sum = 0;
    int n = 0;
    if (row >= R && row < H - R && col >= R && col < W - R) {
        for (int dy = -R; dy <= R - 1; dy++) {
            for (int dx = -R; dx <= R; dx++) {
                int r = row + dy;
                int c = col + dx;
                sum += src[r * W + c];
                n++;
            }
        }
    } else {
        for (int dy = -R; dy <= R; dy++) {
            for (int dx = -R; dx <= R; dx++) {
                int r = row + dy;
                int c = col + dx;
                if (r >= 0 && r < H && c >= 0 && c < W) {
                    sum += src[r * W + c];
                    n++;
                }
            }
        }
    }
    dst[row * W + col] = (unsigned char)(sum / n);
}
