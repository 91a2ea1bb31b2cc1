/* klc-spec
kernel: gauss3x3_u8
sizes: {H: 4096, W: 8192}
verify_sizes:
  - {H: 37, W: 101}
  - {H: 5, W: 7}
  - {H: 1, W: 2}
args:
  - {name: in, shape: [H, W], role: in, init: "randint(0, 256)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 32)", "ceil_div(H, 8)"]
block: [32, 8]
*/
// A 3 x 3 Gaussian (1 2 1 / 2 4 2 / 1 2 1) of an 8-bit image with a replicated border: a
// neighbour outside the image is the nearest pixel inside it; the sum rounded.
__global__ void gauss3x3_u8(const unsigned char* in, unsigned char* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    int sum = 0;
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            int yy = min(max(y + dy, 0), H - 1);
            int xx = min(max(x + dx, 0), W - 1);
            sum += (2 - abs(dy)) * (2 - abs(dx)) * in[yy * W + xx];
        }
    }
    out[y * W + x] = (unsigned char)((sum + 8) / 16);
}
