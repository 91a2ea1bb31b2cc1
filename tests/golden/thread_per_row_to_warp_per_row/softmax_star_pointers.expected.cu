/* klc-spec
kernel: softmax_rows
sizes: {rows: 8192, cols: 1024}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
args:
  - {name: in, shape: [rows, cols], role: in, init: "normal(0, 3)"}
  - {name: out, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["(ceil_div(rows, 256)) * 32"]
block: [256]
bytes: 8 * rows * cols
flops: 4 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 180
*/
// A naive softmax over the rows of a rows x cols matrix, one thread per row, written with the
// star next to the name: the row's maximum, then the exponentials (kept in out) and their
// sum, then a sweep that divides out in place.
__global__ void softmax_rows(const float *in, float *out, int rows, int cols)
{
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (row < rows) {
        const float *x = in + (size_t)row * cols;
        float *y = out + (size_t)row * cols;
        float m = -INFINITY;
        for (int c = lane; c < cols; c += 32) {
            m = fmaxf(m, x[c]);
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
        }
        float s = 0.0f;
        for (int c = lane; c < cols; c += 32) {
            y[c] = expf(x[c] - m);
            s += y[c];
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            s += __shfl_xor_sync(0xffffffffu, s, offset);
        }
        for (int c = lane; c < cols; c += 32) {
            y[c] /= s;
        }
    }
}
