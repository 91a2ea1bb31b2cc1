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
// A 5 x 5 mean filter (radius 2, a #define) after the stencil_rows skills, its rows
// unrolled: its own names (row, col, total, pixels, r, c), the count as ++pixels. The row
// sums are 8 per thread, 5 of them per output row.
#define RADIUS 2

__global__ void mean_filter(const float* input, float* output, int width,
                            int height) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4;
    if (col >= width) return;
    if (y0 >= RADIUS && y0 + 4 + RADIUS <= height && col >= RADIUS && col + RADIUS < width) {
        #pragma unroll
        for (int rr = 0; rr < 4; rr++) {
            int row = y0 + rr;
            float total = 0.0f;
            int pixels = 0;
            for (int dv = -RADIUS; dv <= RADIUS; dv++) {
                for (int du = -RADIUS; du <= RADIUS; du++) {
                    int r = row + dv;
                    int c = col + du;
                    total += input[r * width + c];
                    ++pixels;
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
