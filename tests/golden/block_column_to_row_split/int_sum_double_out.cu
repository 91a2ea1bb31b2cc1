/* klc-spec
kernel: count_positive
sizes: {rows: 8192, cols: 2048}
verify_sizes:
  - {rows: 301, cols: 999}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: counts, shape: [cols], role: inout, init: normal}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 32)"]
block: [32, 16]
bytes: 4 * rows * cols + 8 * cols
flops: rows * cols
*/
// How many rows of each column are positive, added to running counts (a double output, an int sum: refused).
__global__ void count_positive(const float* x, double* counts, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int n = 0;
    __shared__ decltype(n) part[1024];
    if (c < cols) {
        for (int r = threadIdx.y; r < rows; r += blockDim.y) {
            float v = x[r * cols + c];
            n += v > 0.0f ? 1 : 0;
        }
    }
    part[threadIdx.y * blockDim.x + threadIdx.x] = n;
    __syncthreads();
    if (c < cols && threadIdx.y == 0) {
        for (int k = 1; k < blockDim.y; k++) {
            n += part[k * blockDim.x + threadIdx.x];
        }
        counts[c] += n;
    }
}
