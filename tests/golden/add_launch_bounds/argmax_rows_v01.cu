/* klc-spec
kernel: argmax_rows
sizes: {rows: 16384, cols: 4096}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
  - {rows: 5, cols: 1}
args:
  - {name: x, shape: [rows, cols], role: in, init: "randint(0, 16)"}
  - {name: out, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows * 32, 256)"]
block: [256]
bytes: 4 * rows * cols + 4 * rows
flops: rows * cols
timeout_s: 180
*/
// Row argmax of a row-major rows x cols matrix (greedy decoding, top-1 accuracy):
//   out[r] = the smallest c such that x[r, c] is the largest value of row r.
// The input is drawn from 16 integer values, so that most rows hold their maximum several
// times: the first one must win, as in a sequential scan with `if (v > best)`.
// The expert of the argmax_rows lineage; each optimization is one separable code shape
// (README.md names the pass that removes it):
//   - __launch_bounds__(256);
//   - const __restrict__ input, __restrict__ output (the input used as a row pointer);
//   - one warp per row: lanes stride the row 32 apart (coalesced), each keeps the first
//     position of its largest value (a strict `>`: a later equal value never replaces it),
//     and the lanes' (value, position) pairs are merged with xor shuffles, a larger value
//     winning and, between equal values, the smaller position. The merge is associative
//     and commutative, and each lane's pair is the (largest, first) of its own columns, so
//     every lane ends with the (largest, first) pair of the whole row: the sequential
//     scan's answer. Every lane writes the same out[r] (one store transaction).
// bytes: x read once, out written once. flops: one comparison per element.
__global__ void 
argmax_rows(const float* __restrict__ x, int* __restrict__ out, int rows, int cols) {
    const int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (r < rows) {
        const float* xr = x + (size_t)r * cols;
        float best = xr[0];
        int arg = 0;
        for (int c = 1 + lane; c < cols; c += 32) {
            const float v = xr[c];
            if (v > best) {
                best = v;
                arg = c;
            }
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            const auto other_best = __shfl_xor_sync(0xffffffffu, best, offset);
            const auto other_arg = __shfl_xor_sync(0xffffffffu, arg, offset);
            if (other_best > best || (other_best == best && other_arg < arg)) {
                best = other_best;
                arg = other_arg;
            }
        }
        out[r] = arg;
    }
}
