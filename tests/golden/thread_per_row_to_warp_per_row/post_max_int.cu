/* klc-spec
kernel: clip_and_max
sizes: {rows: 16384, cols: 1024}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 3, cols: 2}
args:
  - {name: x, shape: [rows, cols], role: in, init: "randint(-100, 100)"}
  - {name: y, shape: [rows, cols], role: out}
  - {name: top, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 8 * rows * cols + 4 * rows
flops: 2 * rows * cols
timeout_s: 120
*/
// A near miss: an int maximum spelled with an if, then a store. fmaxf would turn the int
// into a float, so no sub-rule takes the loop and it would run whole on every lane; the
// store inside it is refused.
__global__ void clip_and_max(const int* x, int* y, int* top, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const int* xr = x + (size_t)r * cols;
        int* yr = y + (size_t)r * cols;
        int hi = xr[0];
        for (int c = 0; c < cols; c++) {
            int v = xr[c] < 0 ? 0 : xr[c];
            if (v > hi) hi = v;
            yr[c] = v;
        }
        top[r] = hi;
    }
}
