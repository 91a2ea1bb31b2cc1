/* klc-spec
kernel: mean5
sizes: {H: 4096, W: 4096}
verify_sizes:
  - {H: 37, W: 101}
  - {H: 4, W: 3}
  - {H: 1, W: 9}
args:
  - {name: in, shape: [H, W], role: in, init: "uniform(-1, 1)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 32)", "ceil_div(H, 8)"]
block: [32, 8]
bytes: 8 * H * W
flops: 25 * H * W
*/
// A 5 x 5 mean of a float image, each pixel of the window checked against the image and
// counted (count += 1), threads outside the image returning early; the radius a const int.
const int RADIUS = 2;
__global__ void mean5(const float* in, float* out, int H, int W) {
    int x = threadIdx.x + blockIdx.x * blockDim.x;
    int y = threadIdx.y + blockIdx.y * blockDim.y;
    if (x >= W || y >= H) return;
    float acc = 0.0f;
    int count = 0;
    if (y >= RADIUS && y < H - RADIUS && x >= RADIUS && x < W - RADIUS) {
        for (int i = -RADIUS; i <= RADIUS; i++) {
            for (int j = -RADIUS; j <= RADIUS; j++) {
                int yy = y + i;
                int xx = x + j;
                acc += in[yy * W + xx];
                count++;
            }
        }
    } else {
        for (int i = -RADIUS; i <= RADIUS; i++) {
            for (int j = -RADIUS; j <= RADIUS; j++) {
                int yy = y + i;
                int xx = x + j;
                if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
                    acc += in[yy * W + xx];
                    count++;
                }
            }
        }
    }
    out[y * W + x] = acc / count;
}
