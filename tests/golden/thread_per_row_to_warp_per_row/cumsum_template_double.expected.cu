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
grid: ["(ceil_div(rows, 64)) * 32"]
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
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    const size_t base = (size_t)row * cols;
    if (row < rows) {
        double s = 0.0;
        for (int chunk = 0; chunk < cols; chunk += 32) {
            const int c = chunk + lane;
            decltype(s) scan = c < cols ? static_cast<double>(in[base + c]) : 0;
            for (int up = 1; up < 32; up <<= 1) {
                const decltype(s) below = __shfl_up_sync(0xffffffffu, scan, up);
                if (lane >= up) scan += below;
            }
            const decltype(s) carry = s;
            s = carry + scan;
            if (c < cols) {
                out[base + c] = static_cast<T>(s);
            }
            s = carry + __shfl_sync(0xffffffffu, scan, 31);
        }
    }
}
