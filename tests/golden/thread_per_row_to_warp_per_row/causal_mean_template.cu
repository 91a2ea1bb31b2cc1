/* klc-spec
kernel: causal_mean
template: {T: float}
sizes: {rows: 16384, cols: 1024}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 301, cols: 999}
  - {rows: 3, cols: 2}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: out, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 4 * rows * cols + 4 * rows
flops: rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 120
*/
// Mean of the first (r % cols) + 1 elements of each row (an inclusive `<=` bound), templated
// on the element type, with the last column declared between the row index and its check.
template <typename T>
__global__ void causal_mean(const T* x, float* out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    const int last = r % cols;
    if (r < rows) {
        const T* xr = x + (size_t)r * cols;
        float s = 0.0f;
        for (int c = 0; c <= last; ++c) {
            s += static_cast<float>(xr[c]);
        }
        out[r] = s / (last + 1);
    }
}
