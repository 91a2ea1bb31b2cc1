/* klc-spec
kernel: box_filter_u8
sizes: {H: 4096, W: 8192}
verify_sizes:
  - {H: 37, W: 101}
  - {H: 5, W: 7}
  - {H: 1, W: 2}
args:
  - {name: src, shape: [H, W], role: in, init: "randint(0, 256)"}
  - {name: dst, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 32)", "ceil_div(H, 8)"]
block: [32, 8]
*/
// A 5 x 5 mean filter of an 8-bit grey image through a zero-filled halo tile whose
// store reads blockIdx.y, which numbers other rows once a thread computes several. Refused.
#define RADIUS 2
__global__ void box_filter_u8(const unsigned char* src, unsigned char* dst, int H, int W) {
    __shared__ unsigned char tile[8 + 2 * RADIUS][32 + 2 * RADIUS];
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    for (int ty = threadIdx.y; ty < 8 + 2 * RADIUS; ty += blockDim.y) {
        for (int tx = threadIdx.x; tx < 32 + 2 * RADIUS; tx += blockDim.x) {
            int gy = blockIdx.y * blockDim.y + ty - RADIUS;
            int gx = blockIdx.x * blockDim.x + tx - RADIUS;
            tile[ty][tx] = (gy >= 0 && gy < H && gx >= 0 && gx < W) ? src[gy * W + gx] : 0;
        }
    }
    __syncthreads();
    if (x >= W || y >= H) return;
    int sum = 0;
    int count = 0;
    for (int yy = y - RADIUS; yy <= y + RADIUS; yy++) {
        for (int xx = x - RADIUS; xx <= x + RADIUS; xx++) {
            sum += tile[yy - blockIdx.y * blockDim.y + RADIUS][xx - blockIdx.x * blockDim.x + RADIUS];
        }
    }
    count += (min(y + RADIUS, H - 1) - max(y - RADIUS, 0) + 1) * (min(x + RADIUS, W - 1) - max(x - RADIUS, 0) + 1);
    dst[y * W + x] = (unsigned char)(sum / count + blockIdx.y % 2);
}
