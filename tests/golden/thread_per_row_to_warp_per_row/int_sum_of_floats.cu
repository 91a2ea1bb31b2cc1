/* klc-spec
kernel: int_score
sizes: {rows: 4096, cols: 1024}
verify_sizes:
  - {rows: 37, cols: 99}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: out, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 4 * rows * cols
flops: rows * cols
timeout_s: 60
*/
// A near miss: an int accumulator of float terms truncates at every step (0 + 0.7 -> 0,
// then 0 - 0.4 -> 0, where 0.7 - 0.4 summed elsewhere gives 0 too but 1.5 - 0.7 does not):
// lanes' partial sums truncate at other places than the sequential loop. Refused.
__global__ void int_score(const float* x, int* out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        int score = 0;
        for (int c = 0; c < cols; c++) {
            score += x[(size_t)r * cols + c] * 4.0f;
        }
        out[r] = score;
    }
}
