/* klc-spec
kernel: mean_filter_u8
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 3, W: 5}
args:
  - {name: src, shape: [H, W], role: in, init: "uniform(0, 255)"}
  - {name: dst, shape: [H, W], role: out}
  - {name: W, value: W}
  - {name: H, value: H}
grid: ["ceil_div(ceil_div(W, 16), 8)", "ceil_div(H, 16)"]
block: [16, 16]
bytes: 2 * H * W
flops: 9 * H * W
*/
// A 3 x 3 mean filter on an unsigned char image, eight pixels of a row per thread (refused:
// one uchar4 holds four results).
#define R 1

__global__ void mean_filter_u8(const unsigned char* src, unsigned char* dst, int W, int H) {
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    for (int k = 0; k < 8; k++) {
        int col = col0 + k;
        if (col < W && row < H) {
            int sum = 0;
            int n = 0;
            for (int dy = -R; dy <= R; ++dy) {
                for (int dx = -R; dx <= R; ++dx) {
                    int r = row + dy;
                    int c = col + dx;
                    if (r >= 0 && r < H && c >= 0 && c < W) {
                        sum += src[r * W + c];
                        n++;
                    }
                }
            }
            dst[row * W + col] = (unsigned char)(sum / n);
        }
    }
}
