/* klc-spec
kernel: row_argmax
sizes: {rows: 16384, cols: 4096}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 301, cols: 999}
  - {rows: 3, cols: 2}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: idx, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 4 * rows * cols + 4 * rows
flops: rows * cols
timeout_s: 120
*/
// family: row-reduction
// style: thread per row, if-style max with index, integer output, first maximum wins
// idx[r] = the smallest c such that x[r, c] is the row's maximum (greedy decoding).
// bytes: x read once, idx written. flops: one comparison per element.
__global__ void row_argmax(const float *x, int *idx, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float *row = x + r * cols;
        float best = row[0];
        int arg = 0;
        for (int c = 1; c < cols; c++) {
            float v = row[c];
            if (v > best) {
                best = v;
                arg = c;
            }
        }
        idx[r] = arg;
    }
}
