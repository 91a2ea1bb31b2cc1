/* klc-spec
kernel: argmax_rows_t
template: {T: float}
sizes: {rows: 16384, cols: 2048}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 301, cols: 999}
  - {rows: 3, cols: 1}
args:
  - {name: in, shape: [rows, cols], role: in, init: "randint(0, 16)"}
  - {name: labels, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["(ceil_div(rows, 64)) * 32"]
block: [64]
bytes: 4 * rows * cols + 4 * rows
flops: rows * cols
timeout_s: 120
*/
// Predicted class of each row (top-1 accuracy), templated on the element type; the value is
// converted in a statement before the comparison.
template <typename T>
__global__ void argmax_rows_t(const T* in, int* labels, int rows, int cols) {
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (row < rows) {
        const T* x = in + (size_t)row * cols;
        float best = -INFINITY;
        int label = -1;
        for (int c = lane; c < cols; c += 32) {
            float v = static_cast<float>(x[c]);
            if (v > best) {
                best = v;
                label = c;
            }
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            const auto other_best = __shfl_xor_sync(0xffffffffu, best, offset);
            const auto other_arg = __shfl_xor_sync(0xffffffffu, label, offset);
            if (other_best > best || (other_best == best && other_arg < label)) {
                best = other_best;
                label = other_arg;
            }
        }
        labels[row] = label;
    }
}
