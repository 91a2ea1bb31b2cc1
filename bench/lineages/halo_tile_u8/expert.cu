/* klc-spec
kernel: smooth_u8_halo
template: {BX: 32, BY: 8, R: 1}
sizes: {H: 8192, W: 16384}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 1, W: 2}
args:
  - {name: in, shape: [H, W], role: in, init: "randint(0, 256)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, BX)", "ceil_div(H, BY)"]
block: [BX, BY]
bytes: 2 * H * W
flops: 18 * H * W
*/
// Binomial smoothing of an 8-bit grey image, radius R: out[y, x] is the weighted mean of the
// (2R + 1) x (2R + 1) window around (y, x), the weight of offset (dy, dx) being
// (R + 1 - |dy|) * (R + 1 - |dx|) (1 2 1 / 2 4 2 / 1 2 1 at R = 1); pixels outside the image
// are left out and their weights with them; the integer sum rounded to the nearest value.
// The expert of the halo_tile_u8 lineage, written in the spelling of a first convolution (one
// output per thread of a BX x BY block, offsets dy, dx from -R to R, the pixel used when it is
// inside the image) with one optimization on top (README.md names the pass that removes it):
//   - the block stages its (BY + 2R) x (BX + 2R) tile of the image, its own pixels and a
//     halo of R on every side, in shared memory: the block's threads load the tile together
//     (rows from threadIdx.y by blockDim.y, columns from threadIdx.x by blockDim.x; pixels
//     outside the image are not loaded, and the window never reads them), wait at a barrier,
//     and every thread reads its window from the tile.
// The thread leaves after the barrier, so that every thread of the block loads its share.
template <int BX, int BY, int R>
__global__ void smooth_u8_halo(const unsigned char* in, unsigned char* out, int H, int W) {
    __shared__ unsigned char tile[BY + 2 * R][BX + 2 * R];
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    for (int ty = threadIdx.y; ty < BY + 2 * R; ty += blockDim.y) {
        for (int tx = threadIdx.x; tx < BX + 2 * R; tx += blockDim.x) {
            int gy = blockIdx.y * blockDim.y + ty - R;
            int gx = blockIdx.x * blockDim.x + tx - R;
            if (gy >= 0 && gy < H && gx >= 0 && gx < W) {
                tile[ty][tx] = in[gy * W + gx];
            }
        }
    }
    __syncthreads();
    if (x >= W || y >= H) return;
    int sum = 0;
    int wsum = 0;
    for (int dy = -R; dy <= R; dy++) {
        for (int dx = -R; dx <= R; dx++) {
            int yy = y + dy;
            int xx = x + dx;
            if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
                int w = (R + 1 - abs(dy)) * (R + 1 - abs(dx));
                sum += w * tile[yy - blockIdx.y * blockDim.y + R][xx - blockIdx.x * blockDim.x + R];
                wsum += w;
            }
        }
    }
    out[y * W + x] = (unsigned char)((sum + wsum / 2) / wsum);
}
