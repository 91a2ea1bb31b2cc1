/* klc-spec
kernel: mean_u8_zero_fill
template: {BX: 32, BY: 8, R: 2}
sizes: {H: 8192, W: 16384}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 5, W: 7}
  - {H: 1, W: 2}
args:
  - {name: in, shape: [H, W], role: in, init: "randint(0, 256)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, BX)", "ceil_div(H, BY)"]
block: [BX, BY]
bytes: 2 * H * W
flops: 26 * H * W
*/
// Mean filter of an 8-bit grey image, radius R: out[y, x] is the mean of the pixels of the
// (2R + 1) x (2R + 1) window around (y, x) that lie inside the image, truncated to an
// integer. The expert of the halo_tile_zero_fill_u8 lineage, written in the spelling of a
// first mean filter (one output per thread of a BX x BY block, offsets dy, dx from -R to R,
// yy = y + dy and xx = x + dx, the pixel added and counted when it is inside the image), with
// one optimization on top (README.md names the pass that removes it):
//   - the block stages its (BY + 2R) x (BX + 2R) tile of the image, its own pixels and a halo
//     of R on every side, in shared memory, the pixels of the tile outside the image stored
//     as zeros; every thread adds its whole window from the tile without a check (constant
//     bounds: the compiler unrolls both loops), the zeros adding nothing, and counts the
//     pixels of its window inside the image at once, the product of its clipped extents.
// The thread leaves after the barrier, so that every thread of the block loads its share.
template <int BX, int BY, int R>
__global__ void mean_u8_zero_fill(const unsigned char* in, unsigned char* out, int H, int W) {
    __shared__ unsigned char tile[BY + 2 * R][BX + 2 * R];
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    for (int ty = threadIdx.y; ty < BY + 2 * R; ty += blockDim.y) {
        for (int tx = threadIdx.x; tx < BX + 2 * R; tx += blockDim.x) {
            int gy = blockIdx.y * blockDim.y + ty - R;
            int gx = blockIdx.x * blockDim.x + tx - R;
            tile[ty][tx] = (gy >= 0 && gy < H && gx >= 0 && gx < W) ? in[gy * W + gx] : 0;
        }
    }
    __syncthreads();
    if (x >= W || y >= H) return;
    int sum = 0;
    int count = 0;
    for (int dy = -R; dy <= R; dy++) {
        for (int dx = -R; dx <= R; dx++) {
            int yy = y + dy;
            int xx = x + dx;
            sum += tile[yy - blockIdx.y * blockDim.y + R][xx - blockIdx.x * blockDim.x + R];
        }
    }
    count += (min(y + R, H - 1) - max(y - R, 0) + 1) * (min(x + R, W - 1) - max(x - R, 0) + 1);
    out[y * W + x] = (unsigned char)(sum / count);
}
