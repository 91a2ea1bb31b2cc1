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
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 4 * rows * cols
flops: 2 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 180
*/
// Maximum of each row, one thread per row: blockDim first in the index, the bound tested
// as rows > r, the step as c += 1, the maximum kept with an unbraced mirrored if.
__global__ void row_max_factors_swapped(const float* in, float* out, int rows, int cols) {
    int r = blockDim.x * blockIdx.x + threadIdx.x;
    if (rows > r) {
        const float* row_in = in + r * cols;
        float best = -INFINITY;
        for (int c = 0; c < cols; c += 1) {
            float v = row_in[c];
            if (best < v) best = v;
        }
        out[r] = best;
    }
}
