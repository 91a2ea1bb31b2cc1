/* klc-spec
kernel: blurKernel
sizes: {h: 4096, w: 4096}
verify_sizes:
  - {h: 37, w: 101}
  - {h: 5, w: 7}
  - {h: 1, w: 2}
args:
  - {name: in, shape: [h, w], role: in, init: "randint(0, 256)"}
  - {name: out, shape: [h, w], role: out}
  - {name: w, value: w}
  - {name: h, value: h}
grid: ["ceil_div(w, 16)", "ceil_div(h, 16)"]
block: [16, 16]
*/
// An 8-bit blur as first image kernels write it: each neighbour checked with curRow > -1 and
// curCol > -1 (integers: >= 0), which tree-sitter-cuda reads as a template's arguments.
#define BLUR_SIZE 1
__global__ void blurKernel(const unsigned char* in, unsigned char* out, int w, int h) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col < w && row < h) {
        int pixVal = 0;
        int pixels = 0;
        for (int blurRow = -BLUR_SIZE; blurRow < BLUR_SIZE + 1; ++blurRow) {
            for (int blurCol = -BLUR_SIZE; blurCol < BLUR_SIZE + 1; ++blurCol) {
                int curRow = row + blurRow;
                int curCol = col + blurCol;
                if (curRow > -1 && curRow < h && curCol > -1 && curCol < w) {
                    pixVal += in[curRow * w + curCol];
                    ++pixels;
                }
            }
        }
        out[row * w + col] = (unsigned char)(pixVal / pixels);
    }
}
