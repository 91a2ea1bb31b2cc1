/* klc-spec
kernel: mean_filter_zero_fill
template: {BX: 32, BY: 8, R: 2}
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 5, W: 7}
  - {H: 1, W: 2}
args:
  - {name: src, shape: [H, W], role: in, init: "uniform(0, 255)"}
  - {name: dst, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, BX)", "ceil_div(H, BY)"]
block: [BX, BY]
bytes: 8 * H * W
flops: 25 * H * W
*/
// Mean filter of radius R over an H x W float image: dst[y, x] is the mean of src over the
// (2R + 1) x (2R + 1) window around (y, x) clipped to the image (border pixels average fewer
// values). The expert of the halo_tile_zero_fill lineage, written in the spelling of a first
// mean filter (one output per thread of a BX x BY block, the window walked from
// max(y - R, 0) to min(y + R, H - 1), a count of the pixels met), with one optimization on top
// (README.md names the pass that removes it):
//   - the block stages its (BY + 2R) x (BX + 2R) tile of the image, its own pixels and a halo
//     of R on every side, in shared memory, and the pixels of the tile that lie outside the
//     image are stored as zeros. Every thread then adds its whole window from the tile with
//     constant bounds (y - R .. y + R: the compiler unrolls both loops into straight shared
//     loads and adds, no max, min or loop test), the zeros of the border adding nothing, and
//     counts the pixels of its clipped window at once, the product of its clipped extents.
// The thread leaves after the barrier, so that every thread of the block loads its share.
template <int BX, int BY, int R>
__global__ void mean_filter_zero_fill(const float* src, float* dst, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) {
        float acc = 0.0f;
        int n = 0;
        for (int v = max(y - R, 0); v <= min(y + R, H - 1); v++) {
            for (int u = max(x - R, 0); u <= min(x + R, W - 1); u++) {
                acc += src[v * W + u];
                n++;
            }
        }
        dst[y * W + x] = acc / n;
    }
}
