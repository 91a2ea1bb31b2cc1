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
grid: ["ceil_div(width, 32)", "ceil_div(height, 8)"]
block: [32, 8]
bytes: 8 * height * width
flops: 25 * height * width
*/
// A 5 x 5 mean filter with the radius a #define, unsigned sizes, the row from
// blockDim.y * blockIdx.y + threadIdx.y and the bounds check row first.
#define RADIUS 2

__global__ void mean_filter(const float* input, float* output, unsigned int width,
                            unsigned int height) {
    int col = blockDim.x * blockIdx.x + threadIdx.x;
    int row = blockDim.y * blockIdx.y + threadIdx.y;
    if (row >= height || col >= width) return;
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
