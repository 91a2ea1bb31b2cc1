/* klc-spec
kernel: threshold
sizes: {H: 4096, W: 4096}
verify_sizes:
  - {H: 37, W: 101}
args:
  - {name: img, shape: [H, W], role: in, init: "uniform(0, 1)"}
  - {name: mask, shape: [H, W], role: out}
  - {name: t, value: 0.5}
  - {name: W, value: W}
  - {name: H, value: H}
grid: ["ceil_div(ceil_div(W, 16), 4)", "ceil_div(H, 16)"]
block: [16, 16]
bytes: 8 * H * W
flops: H * W
*/
// A per-pixel threshold of a float image, four pixels of a row per thread (refused: four
// floats are no uchar4).
__global__ void threshold(const float* img, float* mask, float t, int W, int H) {
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    for (int k = 0; k < 4; k++) {
        int col = col0 + k;
        if (col < W && row < H) {
            float v = img[row * W + col];
            mask[row * W + col] = v > t ? 1.0f : 0.0f;
        }
    }
}
