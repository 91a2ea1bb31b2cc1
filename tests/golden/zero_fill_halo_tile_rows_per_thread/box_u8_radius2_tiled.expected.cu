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
grid: ["ceil_div(W, 32)", "ceil_div(ceil_div(H, 8), 4)"]
block: [32, 8]
*/
// A 5 x 5 mean filter of an 8-bit grey image through a zero-filled halo tile (as
// clipped_window_to_zero_fill_halo_tile writes it), one row per thread of a 32 x 8 block.
#define RADIUS 2
__global__ void box_filter_u8(const unsigned char* src, unsigned char* dst, int H, int W) {
    __shared__ unsigned char tile[8 * 4 + 2 * RADIUS][32 + 2 * RADIUS];
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    for (int ty = threadIdx.y; ty < 8 * 4 + 2 * RADIUS; ty += blockDim.y) {
        for (int tx = threadIdx.x; tx < 32 + 2 * RADIUS; tx += blockDim.x) {
            int gy = blockIdx.y * (blockDim.y * 4) + ty - RADIUS;
            int gx = blockIdx.x * blockDim.x + tx - RADIUS;
            tile[ty][tx] = (gy >= 0 && gy < H && gx >= 0 && gx < W) ? src[gy * W + gx] : 0;
        }
    }
    __syncthreads();
    for (int r = 0; r < 4; r++) {
        int y = blockIdx.y * (blockDim.y * 4) + r * blockDim.y + threadIdx.y;
        if (x < W && y < H) {
            int sum = 0;
            int count = 0;
            for (int yy = y - RADIUS; yy <= y + RADIUS; yy++) {
                for (int xx = x - RADIUS; xx <= x + RADIUS; xx++) {
                    sum += tile[yy - blockIdx.y * (blockDim.y * 4) + RADIUS][xx - blockIdx.x * blockDim.x + RADIUS];
                }
            }
            count += (min(y + RADIUS, H - 1) - max(y - RADIUS, 0) + 1) * (min(x + RADIUS, W - 1) - max(x - RADIUS, 0) + 1);
            dst[y * W + x] = (unsigned char)(sum / count);
        }
    }
}
