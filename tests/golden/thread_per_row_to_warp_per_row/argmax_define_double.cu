/* klc-spec
kernel: argmax_double_fixed
sizes: {rows: 16384}
verify_sizes:
  - {rows: 256}
  - {rows: 301}
  - {rows: 3}
args:
  - {name: x, shape: [rows, 1000], role: in, init: "randint(-4, 4)"}
  - {name: out, shape: [rows], role: out}
  - {name: rows, value: rows}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 8 * rows * 1000 + 8 * rows
flops: rows * 1000
timeout_s: 120
*/
// Row argmax of doubles with a #define'd row length, a 64-bit position, the comparison
// spelled `best < v`, and a declaration between the row index and its bounds check.
#define NCOLS 1000

__global__ void argmax_double_fixed(const double *x, unsigned long long *out, int rows) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    const double *xr = x + (size_t)r * NCOLS;
    if (r < rows) {
        double best = xr[0];
        unsigned long long pos = 0;
        for (int c = 1; c < NCOLS; c++) {
            const double v = xr[c];
            if (best < v) {
                best = v;
                pos = c;
            }
        }
        out[r] = pos;
    }
}
