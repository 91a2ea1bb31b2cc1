/* klc-spec
kernel: row_mean_mirrored
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
// Mean of each row with the bounds written largest first (rows > row, cols > c) and the
// running total spelled total = total + x[c].
__global__ void row_mean_mirrored(const float* in, float* out, int rows, int cols) {
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (row < rows) {
        const float* x = in + row * cols;
        float total = 0.0f;
        for (int c = lane; c < cols; c += 32) {
            total += x[c];
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            total += __shfl_xor_sync(0xffffffffu, total, offset);
        }
        out[row] = total / cols;
    }
}
