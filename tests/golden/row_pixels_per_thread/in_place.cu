/* klc-spec
kernel: mean3_u8
sizes: {H: 4096, W: 4096}
verify_sizes:
  - {H: 37, W: 101}
args:
  - {name: img, shape: [H, W], type: "unsigned char*", role: inout, init: "randint(0, 256)"}
  - {name: W, value: W}
  - {name: H, value: H}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
bytes: 2 * H * W
flops: 9 * H * W
*/
// A 3 x 3 mean written over the image it reads (refused: a pixel of the thread's loop would
// read the means its earlier pixels stored, where one thread per pixel reads them in an
// order the threads' timing decides).
#define R 1
__global__ void mean3_u8(unsigned char* img, int W, int H) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col < W && row < H) {
        int sum = 0;
        int n = 0;
        for (int dy = -R; dy <= R; ++dy) {
            for (int dx = -R; dx <= R; ++dx) {
                int r = row + dy;
                int c = col + dx;
                if (r >= 0 && r < H && c >= 0 && c < W) {
                    sum += img[r * W + c];
                    ++n;
                }
            }
        }
        img[row * W + col] = (unsigned char)(sum / n);
    }
}
