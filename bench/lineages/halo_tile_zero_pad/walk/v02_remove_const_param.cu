/* klc-spec
kernel: box_blur_zero_pad
template: {BX: 16, BY: 16, R: 1}
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 5, W: 7}
  - {H: 1, W: 2}
args:
  - {name: img, shape: [H, W], role: in, init: "uniform(0, 255)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, BX)", "ceil_div(H, BY)"]
block: [BX, BY]
bytes: 8 * H * W
flops: 10 * H * W
*/
// Box blur of radius R with zero padding: out[y, x] is the sum of img over the
// (2R + 1) x (2R + 1) window around (y, x), pixels outside the image counting as zero,
// divided by the window's size (a fixed divisor: border pixels come out darker). The expert
// of the halo_tile_zero_pad lineage, written in the spelling of a first blur (one output per
// thread of a BX x BY block, offsets dy, dx from -R to R, yy = y + dy and xx = x + dx, the
// pixel added when it is inside the image), with one optimization on top (README.md names
// the pass that removes it):
//   - the block stages its (BY + 2R) x (BX + 2R) tile of the image, its own pixels and a halo
//     of R on every side, in shared memory, the pixels of the tile outside the image stored
//     as zeros (the padding itself); every thread adds its whole window from the tile
//     without a check (constant bounds: the compiler unrolls both loops).
// The thread leaves after the barrier, so that every thread of the block loads its share.
template <int BX, int BY, int R>
__global__ void box_blur_zero_pad(float* img, float* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) {
        float sum = 0.0f;
        for (int dy = -R; dy <= R; dy++) {
            for (int dx = -R; dx <= R; dx++) {
                int yy = y + dy;
                int xx = x + dx;
                if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
                    sum += img[yy * W + xx];
                }
            }
        }
        out[y * W + x] = sum / ((2 * R + 1) * (2 * R + 1));
    }
}
