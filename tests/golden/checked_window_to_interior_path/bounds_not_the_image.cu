/* klc-spec
kernel: mean3_u8
sizes: {H: 4096, W: 4096}
verify_sizes:
  - {H: 37, W: 101}
  - {H: 2, W: 1}
  - {H: 3, W: 5}
args:
  - {name: src, shape: [H, W], type: "unsigned char*", role: in, init: "randint(0, 256)"}
  - {name: dst, shape: [H, W], type: "unsigned char*", role: out}
  - {name: W, value: W}
  - {name: H, value: H}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
bytes: 2 * H * W
flops: 9 * H * W
*/
// A 3 x 3 mean of an 8-bit image, each pixel of the window checked against the image and
// counted (++n), the last row left out of the check (no match: the check is not the
// image's bounds, and no interior path keeps it).
#define R 1
__global__ void mean3_u8(const unsigned char* src, unsigned char* dst, int W, int H) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col < W && row < H) {
        int sum = 0;
        int n = 0;
        for (int dy = -R; dy <= R; ++dy) {
            for (int dx = -R; dx <= R; ++dx) {
                int r = row + dy;
                int c = col + dx;
                if (r >= 0 && r < H - 1 && c >= 0 && c < W) {
                    sum += src[r * W + c];
                    ++n;
                }
            }
        }
        dst[row * W + col] = (unsigned char)(sum / n);
    }
}
