/* klc-spec
kernel: blur_in_place
sizes: {H: 2048, W: 2048}
args:
  - {name: img, shape: [H, W], role: inout, init: "uniform(0, 1)"}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
*/
// A 3 x 3 box blur written back into its own image: a pixel's window reads neighbours that
// other threads overwrite (refused: with several rows per thread a row would read the rows
// its own thread has just blurred).

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
