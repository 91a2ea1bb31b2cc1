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
// Refused: a 5 x 5 mean filter (radius 2) after the stencil_rows skills and the row sums:
// a float4 of row sums reads one neighbour pixel on each side, a radius of 1.
#define RADIUS 2

__global__ void mean_filter(const float* input, float* output, int width,
                            int height) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4;
    if (col >= width) return;
    if (y0 >= RADIUS && y0 + 4 + RADIUS <= height && col >= RADIUS && col + RADIUS < width) {
        float hs[4 + 2 * RADIUS];
        #pragma unroll
        for (int k = 0; k < 4 + 2 * RADIUS; k++) {
            int r = y0 - RADIUS + k;
            hs[k] = 0.0f;
            for (int c = col - RADIUS; c <= col + RADIUS; c++) {
                hs[k] += input[r * width + c];
            }
        }
        #pragma unroll
        for (int rr = 0; rr < 4; rr++) {
            int row = y0 + rr;
            float total = 0.0f;
            int pixels = 0;
            for (int dv = -RADIUS; dv <= RADIUS; dv++) {
                total += hs[rr + RADIUS + dv];
                for (int du = -RADIUS; du <= RADIUS; du++) {
                    pixels++;
                }
            }
            output[row * width + col] = total / pixels;
        }
    } else {
        #pragma unroll
        for (int rr = 0; rr < 4; rr++) {
            int row = y0 + rr;
            if (row >= height) return;
            float total = 0.0f;
            int pixels = 0;
            for (int r = max(row - RADIUS, 0); r <= min(row + RADIUS, height - 1); r++) {
                for (int c = max(col - RADIUS, 0); c <= min(col + RADIUS, width - 1); c++) {
                    total += input[r * width + c];
                    ++pixels;
                }
            }
            output[row * width + col] = total / pixels;
        }
    }
}
