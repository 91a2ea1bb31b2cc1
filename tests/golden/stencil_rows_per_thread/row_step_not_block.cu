/* klc-spec
kernel: box_blur_row_step
sizes: {H: 2048, W: 2048}
verify_sizes:
  - {H: 40, W: 48}
args:
  - {name: img, shape: [H, W], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(H, 32)"]
block: [16, 16]
*/
// A box blur whose row index steps 32 rows a block while the block is 16 rows tall: every
// other band of 16 rows is left alone (refused: the rows per thread would number other rows).

__global__ void box_blur_row_step(const float* img, float* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    if (x >= W || y >= H) return;
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
