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
grid: ["(ceil_div(rows, 128)) * 32"]
block: [128]
bytes: 8 * rows * cols
flops: rows * cols
timeout_s: 120
*/
// Inclusive running count of set flags along each row (stream compaction's output
// positions), integers throughout, one thread per row leaving early past the last one.
__global__ void prefix_counts(const int *flags, int *pos, int rows, int cols) {
    const int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (r < rows) {
        const int *f = flags + r * cols;
        int *p = pos + r * cols;
        int count = 0;
        for (int chunk = 0; chunk < cols; chunk += 32) {
            const int c = chunk + lane;
            decltype(count) scan = c < cols ? f[c] : 0;
            for (int up = 1; up < 32; up <<= 1) {
                const decltype(count) below = __shfl_up_sync(0xffffffffu, scan, up);
                if (lane >= up) scan += below;
            }
            const decltype(count) carry = count;
            count = carry + scan;
            if (c < cols) {
                p[c] = count;
            }
            count = carry + __shfl_sync(0xffffffffu, scan, 31);
        }
    }
}
