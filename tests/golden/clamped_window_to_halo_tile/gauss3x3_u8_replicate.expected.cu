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
    __shared__ unsigned char tile[8 + 2 * 1][32 + 2 * 1];
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    for (int ty = threadIdx.y; ty < 8 + 2 * 1; ty += blockDim.y) {
        for (int tx = threadIdx.x; tx < 32 + 2 * 1; tx += blockDim.x) {
            int gy = min(max((int)(blockIdx.y * blockDim.y) + ty - 1, 0), H - 1);
            int gx = min(max((int)(blockIdx.x * blockDim.x) + tx - 1, 0), W - 1);
            if (gy >= 0 && gx >= 0) {
                tile[ty][tx] = in[gy * W + gx];
            }
        }
    }
    __syncthreads();
    if (x >= W || y >= H) return;
    int sum = 0;
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            int yy = y + dy;
            int xx = x + dx;
            sum += (2 - abs(dy)) * (2 - abs(dx)) * tile[yy - blockIdx.y * blockDim.y + 1][xx - blockIdx.x * blockDim.x + 1];
        }
    }
    out[y * W + x] = (unsigned char)((sum + 8) / 16);
}
