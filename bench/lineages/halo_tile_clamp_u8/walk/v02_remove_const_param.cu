/* klc-spec
kernel: box_u8_clamp
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
// Box filter of radius R of an 8-bit grey image with a replicated border: out[y, x] is the
// mean of the (2R + 1) x (2R + 1) window around (y, x), a neighbour outside the image being
// the nearest pixel inside it, the sum divided by the window's size (rounded). The expert of
// the halo_tile_clamp_u8 lineage, written in the spelling of a first box filter (one output
// per thread of a BX x BY block, offsets dy, dx from -R to R, yy and xx clamped with min and
// max, each pixel added as it is), with one optimization on top (README.md names the pass
// that removes it):
//   - the block stages its (BY + 2R) x (BX + 2R) tile of the image in shared memory, each
//     cell loaded from its coordinates clamped to the image as the window clamps them (an
//     empty image loads nothing); every thread then adds its window from the tile with
//     constant bounds (unrolled), no clamp.
// The thread leaves after the barrier, so that every thread of the block loads its share.
template <int BX, int BY, int R>
__global__ void box_u8_clamp(unsigned char* in, unsigned char* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) {
        int sum = 0;
        for (int dy = -R; dy <= R; dy++) {
            for (int dx = -R; dx <= R; dx++) {
                int yy = min(max(y + dy, 0), H - 1);
                int xx = min(max(x + dx, 0), W - 1);
                sum += in[yy * W + xx];
            }
        }
        const int n = (2 * R + 1) * (2 * R + 1);
        out[y * W + x] = (unsigned char)((sum + n / 2) / n);
    }
}
