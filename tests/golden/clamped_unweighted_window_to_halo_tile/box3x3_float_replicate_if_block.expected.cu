/* klc-spec
kernel: box3x3_replicate
sizes: {height: 4096, width: 4096}
verify_sizes:
  - {height: 37, width: 101}
  - {height: 5, width: 7}
  - {height: 1, width: 2}
args:
  - {name: input, shape: [height, width], role: in, init: "uniform(0, 255)"}
  - {name: output, shape: [height, width], role: out}
  - {name: width, value: width}
  - {name: height, value: height}
grid: ["ceil_div(width, 16)", "ceil_div(height, 16)"]
block: [16, 16]
*/
// A 3 x 3 box blur with the border replicated (clamp to edge), computed inside an if block.
#define RADIUS 1
__global__ void box3x3_replicate(const float* input, float* output, int width, int height) {
    __shared__ float tile[16 + 2 * RADIUS][16 + 2 * RADIUS];
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    for (int ty = threadIdx.y; ty < 16 + 2 * RADIUS; ty += blockDim.y) {
        for (int tx = threadIdx.x; tx < 16 + 2 * RADIUS; tx += blockDim.x) {
            int gy = min(max((int)(blockIdx.y * blockDim.y) + ty - RADIUS, 0), height - 1);
            int gx = min(max((int)(blockIdx.x * blockDim.x) + tx - RADIUS, 0), width - 1);
            if (gy >= 0 && gx >= 0) {
                tile[ty][tx] = input[gy * width + gx];
            }
        }
    }
    __syncthreads();
    if (col >= width || row >= height) return;
    float acc = 0.0f;
    for (int i = -RADIUS; i <= RADIUS; i++) {
        for (int j = -RADIUS; j <= RADIUS; j++) {
            int r = row + i;
            int c = col + j;
            acc += tile[r - blockIdx.y * blockDim.y + RADIUS][c - blockIdx.x * blockDim.x + RADIUS];
        }
    }
    output[row * width + col] = acc / ((2 * RADIUS + 1) * (2 * RADIUS + 1));
}
