/* klc-spec
kernel: logsumexp_rows
sizes: {rows: 65536, cols: 1024}
verify_sizes:
  - {rows: 512, cols: 1024}
  - {rows: 301, cols: 999}
  - {rows: 5, cols: 1}
args:
  - {name: in, shape: [rows, cols], role: in, init: "normal(0, 5)"}
  - {name: out, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 4 * rows * cols + 4 * rows
flops: 3 * rows * cols
timeout_s: 120
*/
// family: row-reduction
// style: thread per row, double accumulator, -INFINITY, if-style max, exp in double, long row offset, early return
// out[r] = log(sum over c of exp(in[r, c])), computed as m + log(sum exp(x - m)) with m the
// row maximum; the sum is kept in double.
// bytes: in read once, out written. flops: 3 per element (exp, log not counted).
__global__ void logsumexp_rows(const float* in, float* out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* x = in + (long)r * cols;
    float m = -INFINITY;
    for (int c = 0; c < cols; c++) {
        if (x[c] > m) m = x[c];
    }
    double acc = 0.0;
    for (int c = 0; c < cols; c++) {
        acc += exp((double)(x[c] - m));
    }
    out[r] = m + (float)log(acc);
}
