/* klc-spec
kernel: conv3x3
sizes: {height: 2048, width: 4096}
args:
  - {name: input, shape: [height, width], role: in, init: normal}
  - {name: mask, shape: [9], role: in, init: "uniform(0, 1)"}
  - {name: output, shape: [height, width], role: out}
  - {name: height, value: height}
  - {name: width, value: width}
grid: ["ceil_div(width, 32)", "ceil_div(height, 32)"]
block: [32, 32]
*/
// A 3 x 3 convolution with its mask in an argument, zero outside the image: the radius a
// #define, the mask read through the offsets, a 32 x 32 block.
#define MASK_RADIUS 1

__global__ void conv3x3(const float* input, const float* mask, float* output, int height,
                        int width) {
    __shared__ float tile[32 + 2 * MASK_RADIUS][32 + 2 * MASK_RADIUS];
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    for (int ty = threadIdx.y; ty < 32 + 2 * MASK_RADIUS; ty += blockDim.y) {
        for (int tx = threadIdx.x; tx < 32 + 2 * MASK_RADIUS; tx += blockDim.x) {
            int gy = blockIdx.y * blockDim.y + ty - MASK_RADIUS;
            int gx = blockIdx.x * blockDim.x + tx - MASK_RADIUS;
            if (gy >= 0 && gy < height && gx >= 0 && gx < width) {
                tile[ty][tx] = input[gy * width + gx];
            }
        }
    }
    __syncthreads();
    if (col >= width || row >= height) return;
    float acc = 0.0f;
    for (int i = -MASK_RADIUS; i <= MASK_RADIUS; i++) {
        for (int j = -MASK_RADIUS; j <= MASK_RADIUS; j++) {
            int r = row + i;
            int c = col + j;
            if (r >= 0 && r < height && c >= 0 && c < width) {
                acc += mask[(i + MASK_RADIUS) * 3 + j + MASK_RADIUS] * tile[r - blockIdx.y * blockDim.y + MASK_RADIUS][c - blockIdx.x * blockDim.x + MASK_RADIUS];
            }
        }
    }
    output[row * width + col] = acc;
}
