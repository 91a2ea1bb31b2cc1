/* klc-spec
kernel: prefix_counts
sizes: {rows: 16384, cols: 2048}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 301, cols: 999}
  - {rows: 3, cols: 1}
args:
  - {name: flags, shape: [rows, cols], role: in, init: "randint(0, 2)"}
  - {name: pos, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 8 * rows * cols
flops: rows * cols
timeout_s: 120
*/
// Inclusive running count of set flags along each row (stream compaction's output
// positions), integers throughout, one thread per row leaving early past the last one.
__global__ void prefix_counts(const int *flags, int *pos, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const int *f = flags + r * cols;
    int *p = pos + r * cols;
    int count = 0;
    for (int c = 0; c < cols; ++c) {
        count += f[c];
        p[c] = count;
    }
}
