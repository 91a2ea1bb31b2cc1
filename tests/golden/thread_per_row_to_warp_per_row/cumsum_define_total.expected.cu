/* klc-spec
kernel: cumsum_fixed
sizes: {rows: 16384}
verify_sizes:
  - {rows: 256}
  - {rows: 3}
args:
  - {name: x, shape: [rows, 500], role: in, init: "normal(0.1, 1)"}
  - {name: y, shape: [rows, 500], role: out}
  - {name: totals, shape: [rows], role: out}
  - {name: rows, value: rows}
grid: ["(ceil_div(rows, 256)) * 32"]
block: [256]
bytes: 8 * rows * 500 + 4 * rows
flops: rows * 500
tolerance: {rtol: 0.0001, atol: 0.00001}
timeout_s: 120
*/
// Cumulative sum of rows of a #define'd length in float, the scaled running sum stored, and
// each row's total stored after the loop.
#define COLS 500

__global__ void cumsum_fixed(const float* x, float* y, float* totals, int rows) {
    const int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (r < rows) {
        const float* xr = x + r * COLS;
        float* yr = y + r * COLS;
        float acc = 0.0f;
        for (int chunk = 0; chunk < COLS; chunk += 32) {
            const int c = chunk + lane;
            decltype(acc) scan = c < COLS ? xr[c] : 0;
            for (int up = 1; up < 32; up <<= 1) {
                const decltype(acc) below = __shfl_up_sync(0xffffffffu, scan, up);
                if (lane >= up) scan += below;
            }
            const decltype(acc) carry = acc;
            acc = carry + scan;
            if (c < COLS) {
                yr[c] = 0.5f * acc;
            }
            acc = carry + __shfl_sync(0xffffffffu, scan, 31);
        }
        totals[r] = acc;
    }
}
