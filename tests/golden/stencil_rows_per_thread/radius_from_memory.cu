/* klc-spec
kernel: box_blur_radius
sizes: {H: 2048, W: 2048}
args:
  - {name: img, shape: [H, W], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [H, W], role: out}
  - {name: radius, shape: [1], type: "int*", role: in, init: "ones"}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
*/
// A box blur whose radius the kernel reads from memory: its window loops have no trip count
// the compiler knows (refused: several rows per thread would only wrap a loop around them).

__global__ void box_blur_radius(const float* img, float* out, const int* radius, int H,
                                int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    int r = radius[0];
    float sum = 0.0f;
    int count = 0;
    for (int yy = max(y - r, 0); yy <= min(y + r, H - 1); yy++) {
        for (int xx = max(x - r, 0); xx <= min(x + r, W - 1); xx++) {
            sum += img[yy * W + xx];
            count++;
        }
    }
    out[y * W + x] = sum / count;
}
