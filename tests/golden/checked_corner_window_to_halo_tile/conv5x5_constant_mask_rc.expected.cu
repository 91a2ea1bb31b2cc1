/* klc-spec
kernel: conv5x5_constant
sizes: {H: 1024, W: 2048}
args:
  - {name: in, shape: [H, W], role: in, init: "uniform(-1, 1)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 32)", "ceil_div(H, 8)"]
block: [32, 8]
*/
// A 5 x 5 convolution of an H x W image with its mask in a 2-D __constant__ array: the loops
// named r and c, the corner from a literal radius, the column index declared first, the
// mask's entry first in the product, the sum spelled out, pre-increments.
__constant__ float K[5][5];

__global__ void conv5x5_constant(const float* in, float* out, int H, int W) {
    __shared__ float tile[8 + 5 - 1][32 + 5 - 1];
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int r0 = y - 2;
    int c0 = x - 2;
    float acc = 0.0f;
    for (int ty = threadIdx.y; ty < 8 + 5 - 1; ty += blockDim.y) {
        for (int tx = threadIdx.x; tx < 32 + 5 - 1; tx += blockDim.x) {
            int gr = blockIdx.y * blockDim.y + ty - 2;
            int gc = blockIdx.x * blockDim.x + tx - 2;
            tile[ty][tx] = (gr >= 0 && gr < H && gc >= 0 && gc < W) ? in[gr * W + gc] : 0;
        }
    }
    __syncthreads();
    for (int r = 0; r < 5; r++) {
        for (int c = 0; c < 5; c++) {
            if ((r0 + r) >= 0 && (r0 + r) < H) {
                if ((c0 + c) >= 0 && (c0 + c) < W) {
                    acc += tile[threadIdx.y + r][threadIdx.x + c] * K[r][c];
                }
            }
        }
    }
    if (y < H && x < W) out[y * W + x] = acc;
}
