/* klc-spec
kernel: argmax_drift
sizes: {rows: 16384, cols: 4096}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 3, cols: 2}
args:
  - {name: x, shape: [rows, cols], role: in, init: "randint(0, 8)"}
  - {name: idx, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 4 * rows * cols + 4 * rows
flops: rows * cols
timeout_s: 120
*/
// A near miss: the compared value depends on the running best (each candidate is damped
// toward it), so the sequential order matters and lanes that see fewer columns would not
// agree with the scan.
__global__ void argmax_drift(const float *x, int *idx, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float *row = x + r * cols;
        float best = row[0];
        int arg = 0;
        for (int c = 1; c < cols; c++) {
            float v = 0.5f * (row[c] + best);
            if (v > best) {
                best = v;
                arg = c;
            }
        }
        idx[r] = arg;
    }
}
