/* klc-spec
kernel: cumsum_warp_rows
sizes: {rows: 16384, cols: 2048}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 301, cols: 999}
  - {rows: 37, cols: 5}
  - {rows: 3, cols: 1}
args:
  - {name: x, shape: [rows, cols], role: in, init: "normal(0.1, 1)"}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows * 32, 256)"]
block: [256]
bytes: 8 * rows * cols
flops: rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 180
*/
// Inclusive prefix sum along each row, y[r, c] = x[r, 0] + ... + x[r, c], the running sum
// kept in double. The expert of the cumsum_warp_rows lineage; each optimization is one
// separable code shape (README.md names the pass that removes it):
//   - __launch_bounds__(256);
//   - const __restrict__ input, __restrict__ output (used as row pointers);
//   - one warp per row: the row is scanned 32 columns at a time, lane l taking column
//     chunk + l (coalesced loads and stores); a Hillis-Steele scan with __shfl_up_sync gives
//     every lane the sum of the chunk up to its column, the running sum before the chunk
//     (the same on every lane) is added for the lane's own store, and the chunk's total
//     (lane 31's scan) is added to the running sum, so that it is again the same on every
//     lane. Lanes past the end of the row contribute 0 and store nothing.
// bytes: x read once, y written once. flops: one add per element.
__global__ void __launch_bounds__(256)
cumsum_warp_rows(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    const int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (r < rows) {
        const float* xr = x + (size_t)r * cols;
        float* yr = y + (size_t)r * cols;
        double running = 0.0;
        for (int chunk = 0; chunk < cols; chunk += 32) {
            const int c = chunk + lane;
            decltype(running) scan = c < cols ? xr[c] : 0;
            for (int up = 1; up < 32; up <<= 1) {
                const decltype(running) below = __shfl_up_sync(0xffffffffu, scan, up);
                if (lane >= up) scan += below;
            }
            const decltype(running) carry = running;
            running = carry + scan;
            if (c < cols) {
                yr[c] = (float)running;
            }
            running = carry + __shfl_sync(0xffffffffu, scan, 31);
        }
    }
}
