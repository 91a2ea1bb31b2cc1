/* klc-spec
kernel: row_max_factors_swapped
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
// Maximum of each row, one thread per row: blockDim first in the index, the bound tested
// as rows > r, the step as c += 1, the maximum kept with an unbraced mirrored if.
__global__ void row_max_factors_swapped(const float* in, float* out, int rows, int cols) {
    const int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (r < rows) {
        const float* row_in = in + r * cols;
        float best = -INFINITY;
        for (int c = lane; c < cols; c += 32) {
            float v = row_in[c];
            best = fmaxf(best, v);
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            best = fmaxf(best, __shfl_xor_sync(0xffffffffu, best, offset));
        }
        out[r] = best;
    }
}
