/* klc-spec
kernel: damped_sum
sizes: {rows: 4096, cols: 1024}
verify_sizes:
  - {rows: 37, cols: 99}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: b, shape: [rows], role: in, init: normal}
  - {name: y, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 4 * rows * cols + 8 * rows
flops: 3 * rows * cols
timeout_s: 120
*/
// A near miss: the sum starts at the bias but each step reads the accumulator (a damped
// sum, acc += x * (1 - acc / 16)): not a sum of terms that lanes may take apart.
__global__ void damped_sum(const float* x, const float* b, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* xr = x + (size_t)r * cols;
        float acc = b[r];
        for (int c = 0; c < cols; c++) {
            const float damp = 1.0f - acc / 16.0f;
            acc += xr[c] * damp;
        }
        y[r] = acc;
    }
}
