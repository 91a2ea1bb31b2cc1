/* klc-spec
kernel: conv5x5_constant
sizes: {H: 1024, W: 2048}
verify_sizes:
  - {H: 37, W: 101}
  - {H: 3, W: 5}
args:
  - {name: in, shape: [H, W], role: in, init: "uniform(-1, 1)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 32)", "ceil_div(ceil_div(H, 8), 4)"]
block: [32, 8]
*/
// A 5 x 5 convolution of an H x W image with its mask in a 2-D __constant__ array: the loops
// named r and c, the corner from a literal radius, the column index declared first, the
// checks in one && chain, the mask's entry first in the product, the store unbraced.
__constant__ float K[5][5];

__global__ void conv5x5_constant(const float* in, float* out, int H, int W) {
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    for (int rr = 0; rr < 4; rr++) {
        int y = y0 + rr;
        if (y >= H) return;
        int r0 = y - 2;
        int c0 = x - 2;
        float acc = 0.0f;
        for (int r = 0; r < 5; ++r) {
            for (int c = 0; c < 5; ++c) {
                if ((r0 + r) >= 0 && (r0 + r) < H && (c0 + c) >= 0 && (c0 + c) < W) {
                    acc += K[r][c] * in[(r0 + r) * W + (c0 + c)];
                }
            }
        }
        if (y < H && x < W) {
            out[y * W + x] = acc;
        }
    }
}
