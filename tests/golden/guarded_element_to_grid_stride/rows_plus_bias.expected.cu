/* klc-spec
kernel: rows_plus_bias
sizes: {rows: 64, cols: 1048576}
verify_sizes:
  - {rows: 3, cols: 5000}
args:
  - {name: y, shape: [rows, cols], role: out}
  - {name: x, shape: [rows, cols], role: in}
  - {name: bias, shape: [cols], role: in}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(ceil_div(cols, 256), 16)"]
block: [256]
bytes: 8 * rows * cols + 4 * cols
*/
#include <cstdint>

// The bias added to every row: the threads along x take one column each, with a 64-bit
// index cast from blockIdx.x, inside the loop over rows; the host sizes the grid itself.
__global__ void rows_plus_bias(float* y, const float* x, const float* bias, int rows,
                               int64_t cols) {
    for (int r = 0; r < rows; r++) {
        {
            for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < cols; i += blockDim.x * gridDim.x) {
                y[r * cols + i] = x[r * cols + i] + bias[i];
            }
        }
    }
}

void rows_plus_bias_launch(float* y, const float* x, const float* bias, int rows,
                           int64_t cols) {
    const int threads = 256;
    const int blocks = (cols + threads - 1) / threads;
    rows_plus_bias<<<[&] { dim3 klc_dims(blocks); klc_dims.x = (klc_dims.x + 15u) / 16u; return klc_dims; }(), threads>>>(y, x, bias, rows, cols);
}
