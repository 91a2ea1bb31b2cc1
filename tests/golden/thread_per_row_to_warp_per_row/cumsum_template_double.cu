/* klc-spec
kernel: cumsum_t
template: {T: float}
sizes: {rows: 16384, cols: 2048}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 301, cols: 999}
  - {rows: 3, cols: 1}
args:
  - {name: in, shape: [rows, cols], role: in, init: "normal(0.1, 1)"}
  - {name: out, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 64)"]
block: [64]
bytes: 8 * rows * cols
flops: rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 120
*/
// torch.cumsum on the last dimension, templated, the running sum in double, indexed through
// the matrix with a 64-bit row offset declared between the row index and its check.
template <typename T>
__global__ void cumsum_t(const T* in, T* out, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    const size_t base = (size_t)row * cols;
    if (row < rows) {
        double s = 0.0;
        for (int c = 0; c < cols; c++) {
            s += static_cast<double>(in[base + c]);
            out[base + c] = static_cast<T>(s);
        }
    }
}
