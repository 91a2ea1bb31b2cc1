/* klc-spec
kernel: col_scaled_sum
template: {T: float}
sizes: {rows: 16384, cols: 2048}
verify_sizes:
  - {rows: 301, cols: 999}
  - {rows: 3, cols: 5}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: w, shape: [rows], role: in, init: normal}
  - {name: y, shape: [cols], role: inout, init: normal}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["(ceil_div(cols, 128)) * 4"]
block: ["ceil_div(128, 4)", 32]
bytes: 4 * rows * cols + 4 * rows + 8 * cols
flops: 2 * rows * cols
tolerance: {rtol: 0.0002, atol: 0.00001}
*/
// Weighted column sums (x^T w) added into y, templated, a row pointer per row, 64-bit rows.
template <typename T>
__global__ void col_scaled_sum(const T* x, const T* w, T* y, long rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    T total = 0;
    const int stride = cols;
    __shared__ decltype(total) part[1024];
    if (c < cols) {
        for (long r = threadIdx.y; r < rows; r += blockDim.y) {
            const T* row = x + r * stride;
            T wr = w[r];
            total += row[c] * wr;
        }
    }
    part[threadIdx.y * blockDim.x + threadIdx.x] = total;
    __syncthreads();
    if (c < cols && threadIdx.y == 0) {
        for (int k = 1; k < blockDim.y; k++) {
            total += part[k * blockDim.x + threadIdx.x];
        }
        y[c] += total;
    }
}
