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
    __shared__ unsigned char tile[16 + 2 * BLUR_SIZE][16 + 2 * BLUR_SIZE];
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    for (int ty = threadIdx.y; ty < 16 + 2 * BLUR_SIZE; ty += blockDim.y) {
        for (int tx = threadIdx.x; tx < 16 + 2 * BLUR_SIZE; tx += blockDim.x) {
            int gy = blockIdx.y * blockDim.y + ty - BLUR_SIZE;
            int gx = blockIdx.x * blockDim.x + tx - BLUR_SIZE;
            tile[ty][tx] = (gy >= 0 && gy < h && gx >= 0 && gx < w) ? in[gy * w + gx] : 0;
        }
    }
    __syncthreads();
    if (col >= w || row >= h) return;
    int pixVal = 0;
    int pixels = 0;
    for (int blurRow = -BLUR_SIZE; blurRow <= BLUR_SIZE; blurRow++) {
        for (int blurCol = -BLUR_SIZE; blurCol <= BLUR_SIZE; blurCol++) {
            int curRow = row + blurRow;
            int curCol = col + blurCol;
            pixVal += tile[curRow - blockIdx.y * blockDim.y + BLUR_SIZE][curCol - blockIdx.x * blockDim.x + BLUR_SIZE];
        }
    }
    pixels += (min(row + BLUR_SIZE, h - 1) - max(row - BLUR_SIZE, 0) + 1) * (min(col + BLUR_SIZE, w - 1) - max(col - BLUR_SIZE, 0) + 1);
    out[row * w + col] = (unsigned char)(pixVal / pixels);
}
