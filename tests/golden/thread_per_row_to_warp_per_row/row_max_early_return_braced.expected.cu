/* klc-spec
kernel: row_max_early_return_braced
sizes: {rows: 4096, cols: 1024}
verify_sizes:
  - {rows: 256, cols: 512}
  - {rows: 77, cols: 1001}
  - {rows: 3, cols: 5}
args:
  - {name: in, shape: [rows, cols], role: in, init: "normal(0, 2)"}
  - {name: out, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["(ceil_div(rows, 128)) * 32"]
block: [128]
bytes: 4 * rows * cols
flops: 2 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 180
*/
// Maximum of each row: the guard written bound-first with a braced return, then the row.
__global__ void row_max_early_return_braced(const float* in, float* out, int rows, int cols) {
    const int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (r < rows) {
        const float* x = in + r * cols;
        float m = -INFINITY;
        for (int c = lane; c < cols; c += 32) {
            m = fmaxf(m, x[c]);
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
        }
        out[r] = m;
    }
}
