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
grid: ["(ceil_div(rows, 256)) * 32"]
block: [256]
bytes: 8 * rows * 1000 + 8 * rows
flops: rows * 1000
timeout_s: 120
*/
// Row argmax of doubles with a #define'd row length, a 64-bit position, the comparison
// spelled `best < v`, and a declaration between the row index and its bounds check.
#define NCOLS 1000

__global__ void argmax_double_fixed(const double *x, unsigned long long *out, int rows) {
    const int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    const double *xr = x + (size_t)r * NCOLS;
    if (r < rows) {
        double best = xr[0];
        unsigned long long pos = 0;
        for (int c = 1 + lane; c < NCOLS; c += 32) {
            const double v = xr[c];
            if (v > best) {
                best = v;
                pos = c;
            }
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            const auto other_best = __shfl_xor_sync(0xffffffffu, best, offset);
            const auto other_arg = __shfl_xor_sync(0xffffffffu, pos, offset);
            if (other_best > best || (other_best == best && other_arg < pos)) {
                best = other_best;
                pos = other_arg;
            }
        }
        out[r] = pos;
    }
}
