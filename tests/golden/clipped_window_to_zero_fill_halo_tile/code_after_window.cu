/* klc-spec
kernel: mean3x3_then_copy
sizes: {H: 512, W: 512}
args:
  - {name: img, shape: [H, W], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [H, W], role: out}
  - {name: flag, shape: [1], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
*/
// The window's if block is followed by more code, which the tile's early return would
// skip for the threads outside the image. Refused.
__global__ void mean3x3_then_copy(const float* img, float* out, int* flag, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) {
        float sum = 0.0f;
        int count = 0;
        for (int yy = max(y - 1, 0); yy <= min(y + 1, H - 1); yy++) {
            for (int xx = max(x - 1, 0); xx <= min(x + 1, W - 1); xx++) {
                sum += img[yy * W + xx];
                count++;
            }
        }
        out[y * W + x] = sum / count;
    }
    if (x == 0 && y == 0) flag[0] = 1;
}
