/* klc-spec
kernel: blur_in_place
sizes: {H: 1024, W: 1024}
args:
  - {name: img, shape: [H, W], role: inout, init: "uniform(0, 1)"}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
*/
// A filter that writes its result over its input: a thread may read a pixel another thread
// has already replaced, and a tile loaded before the writes would read others. Refused.
__global__ void blur_in_place(float* img, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    float sum = 0.0f;
    int count = 0;
    for (int yy = max(y - 1, 0); yy <= min(y + 1, H - 1); yy++) {
        for (int xx = max(x - 1, 0); xx <= min(x + 1, W - 1); xx++) {
            sum += img[yy * W + xx];
            count++;
        }
    }
    img[y * W + x] = sum / count;
}
