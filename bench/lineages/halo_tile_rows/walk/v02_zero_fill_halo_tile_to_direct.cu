/* klc-spec
kernel: mean_filter_rows
template: {BX: 32, BY: 8, R: 1, RPT: 4}
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
grid: ["ceil_div(W, BX)", "(ceil_div(H, BY * RPT)) * 4"]
block: [BX, BY]
bytes: 8 * H * W
flops: 9 * H * W
*/
// Mean filter of radius R over an H x W float image: dst[y, x] is the mean of src over the
// (2R + 1) x (2R + 1) window around (y, x) clipped to the image. The expert of the
// halo_tile_rows lineage: the zero-filled halo tile of halo_tile_zero_fill (the window added
// whole from the tile with constant bounds, the count the product of the clipped extents),
// with one more optimization on top (README.md names the passes that remove them):
//   - every thread computes RPT rows, BY apart: the block's tile is RPT times taller
//     ((BY * RPT + 2R) x (BX + 2R)), so its halo rows are loaded once for RPT rows of the
//     block instead of once for each, and the grid is RPT times shorter.
template <int BX, int BY, int R, int RPT>
__global__ void mean_filter_rows(const float* src, float* dst, int H, int W) {
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
