/* klc-spec
kernel: tile_flip
template: {ROWS: 16, COLS: 16}
sizes: {h: 1024, w: 1024}
args:
  - {name: out, shape: [w, h], role: out}
  - {name: in, shape: [h, w], role: in}
  - {name: h, value: h}
  - {name: w, value: w}
grid: ["ceil_div(w, 16)", "ceil_div(h, 16)"]
block: [16, 16]
bytes: 8 * h * w
*/
// A tile of template sizes, its pitch COLS + 1 written out, one access with an offset
// split over two terms.
template <int ROWS, int COLS>
__global__ void tile_flip(float* out, const float* in, int h, int w) {
    __shared__ float buf[ROWS * (COLS + 1)];
    const int r = threadIdx.y;
    const int c = threadIdx.x;
    const int i = blockIdx.y * ROWS;
    const int j = blockIdx.x * COLS;
    if (i + r < h && j + c < w) {
        buf[r * (COLS + 1) + c] = in[(i + r) * w + j + c];
    }
    __syncthreads();
    if (j + r < w && i + c < h) {
        out[(j + r) * h + i + c] = buf[c * (COLS + 1) + r + 0];
    }
}
