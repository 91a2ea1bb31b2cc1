/* klc-spec
kernel: mean_filter
sizes: {height: 4096, width: 4096}
verify_sizes:
  - {height: 37, width: 101}
  - {height: 1, width: 3}
args:
  - {name: input, shape: [height, width], role: in, init: "uniform(0, 1)"}
  - {name: output, shape: [height, width], role: out}
  - {name: width, value: width}
  - {name: height, value: height}
grid: ["ceil_div(width, 32)", "ceil_div(ceil_div(height, 8), 4)"]
block: [32, 8]
bytes: 8 * height * width
flops: 25 * height * width
*/
// A 5 x 5 mean filter with the radius a #define, unsigned sizes, the row from
// blockDim.y * blockIdx.y + threadIdx.y, the pixel's work inside if (row < height && col <
// width) { ... } (a known failure: the early-return isomorphism reads one condition, not
// the two of this check).
#define RADIUS 2

__global__ void mean_filter(const float* input, float* output, unsigned int width,
                            unsigned int height) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4;
    if (col >= width) return;
    for (int rr = 0; rr < 4; rr++) {
        int row = y0 + rr;
        if (row >= height) return;
        float total = 0.0f;
        int pixels = 0;
        for (int r = max(row - RADIUS, 0); r <= min(row + RADIUS, (int)height - 1); ++r) {
            for (int c = max(col - RADIUS, 0); c <= min(col + RADIUS, (int)width - 1); ++c) {
                total += input[r * width + c];
                ++pixels;
            }
        }
        output[row * width + col] = total / pixels;
    }
}
