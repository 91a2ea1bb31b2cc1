/* klc-spec
kernel: column_sum
sizes: {rows: 32768, cols: 2048}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 301, cols: 999}
  - {rows: 3, cols: 5}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: out, shape: [cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(ceil_div(cols, 32), 2)"]
block: ["(32) * 2", "ceil_div(32, 32)"]
bytes: 4 * rows * cols + 4 * cols
flops: rows * cols
tolerance: {rtol: 0.0002, atol: 0.00001}
timeout_s: 120
*/
// Sum each column of a row-major rows x cols matrix: out[c] = sum over r of x[r, c].
// The expert of the column_sum lineage. A 32 x 32 block reduces 32 neighbouring columns:
// threadIdx.x picks the column (a warp reads 32 consecutive floats of one row: coalesced),
// threadIdx.y picks a slice of the rows (rows y, y + 32, y + 64, ...), so 32 threads share
// a column instead of one walking it alone. The 32 partial sums meet in shared memory
// after one barrier, and the slice-0 thread adds them in slice order (deterministic: no
// atomics) and writes the column. Every thread reaches the barrier: the column check
// guards the row loop and the final write only.
// Why 32 rows at once: with cols / 32 blocks, only the row slices keep loads in flight;
// at 32 x 8 the block form was slower than one thread per column (0.72x on an H200),
// at 32 x 32 it is 2.85x (rows=32768, cols=2048; bench/column_shapes.py).
// bytes: x read once, out written once. flops: one add per element.
__global__ void column_sum(float* x, float* out, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        float sum = 0.0f;
        for (int r = 0; r < rows; r++) {
            sum += x[(size_t)r * cols + c];
        }
        out[c] = sum;
    }
}
