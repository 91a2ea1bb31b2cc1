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
grid: ["ceil_div(ceil_div(rows * 32, 256), 32)"]
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
argmax_rows(const float* x, int* out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* xr = x + (size_t)r * cols;
        float best = xr[0];
        int arg = 0;
        for (int c = 1; c < cols; c++) {
            const float v = xr[c];
            if (v > best) {
                best = v;
                arg = c;
            }
        }
        out[r] = arg;
    }
}
