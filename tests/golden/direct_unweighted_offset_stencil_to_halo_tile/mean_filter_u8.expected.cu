/* klc-spec
kernel: meanFilter
sizes: {height: 1080, width: 1920}
args:
  - {name: input, shape: [height, width], role: in, init: "randint(0, 256)"}
  - {name: output, shape: [height, width], role: out}
  - {name: width, value: width}
  - {name: height, value: height}
grid: ["ceil_div(width, 32)", "ceil_div(height, 16)"]
block: [32, 16]
*/
// A 5 x 5 mean filter of an 8-bit image in the spelling of a first version: the window
// half-width a #define, the offsets' bounds spelled -FILTER_HALF and FILTER_HALF, unsigned
// char in and out, the pixels inside the image counted, a 32 x 16 block.
#define FILTER_HALF 2

__global__ void meanFilter(const unsigned char* __restrict__ input,
                           unsigned char* __restrict__ output, int width, int height) {
    __shared__ unsigned char tile[16 + 2 * FILTER_HALF][32 + 2 * FILTER_HALF];
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    for (int ty = threadIdx.y; ty < 16 + 2 * FILTER_HALF; ty += blockDim.y) {
        for (int tx = threadIdx.x; tx < 32 + 2 * FILTER_HALF; tx += blockDim.x) {
            int gy = blockIdx.y * blockDim.y + ty - FILTER_HALF;
            int gx = blockIdx.x * blockDim.x + tx - FILTER_HALF;
            if (gy >= 0 && gy < height && gx >= 0 && gx < width) {
                tile[ty][tx] = input[gy * width + gx];
            }
        }
    }
    __syncthreads();
    if (col >= width || row >= height) return;
    int sum = 0;
    int pixels = 0;
    for (int i = -FILTER_HALF; i <= FILTER_HALF; i++) {
        for (int j = -FILTER_HALF; j <= FILTER_HALF; j++) {
            int r = row + i;
            int c = col + j;
            if (r >= 0 && r < height && c >= 0 && c < width) {
                sum += tile[r - blockIdx.y * blockDim.y + FILTER_HALF][c - blockIdx.x * blockDim.x + FILTER_HALF];
                ++pixels;
            }
        }
    }
    output[row * width + col] = (unsigned char)(sum / pixels);
}
