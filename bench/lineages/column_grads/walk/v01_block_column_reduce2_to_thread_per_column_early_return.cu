/* klc-spec
kernel: column_grads
sizes: {rows: 16384, cols: 2048}
verify_sizes:
  - {rows: 256, cols: 768}
  - {rows: 301, cols: 999}
  - {rows: 3, cols: 5}
args:
  - {name: dy, shape: [rows, cols], role: in, init: normal}
  - {name: x, shape: [rows, cols], role: in, init: "normal(0.5, 2)"}
  - {name: center, shape: [cols], role: in, init: "normal(0.5, 0.1)"}
  - {name: dscale, shape: [cols], role: out}
  - {name: dshift, shape: [cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(ceil_div(cols, 32), 2)"]
block: ["(32) * 2", "ceil_div(32, 32)"]
bytes: 8 * rows * cols + 12 * cols
flops: 4 * rows * cols
tolerance: {rtol: 0.0002, atol: 0.00001}
timeout_s: 120
*/
// Gradients of a per-feature affine map y = scale[c] * (x - center[c]) + shift[c] over a
// batch of rows (row-major rows x cols):
//   dscale[c] = sum_r dy[r, c] * (x[r, c] - center[c]),  dshift[c] = sum_r dy[r, c].
// The expert of the column_grads lineage. A 32 x 32 block reduces 32 neighbouring columns:
// threadIdx.x picks the column (coalesced rows), threadIdx.y every 32nd row, so 32 threads
// share a column. Both partial sums meet in shared memory after one barrier; then every
// thread but the slice-0 thread of an in-range column leaves, and that one adds the partial
// sums in slice order (deterministic, no atomics) and writes the column. No thread leaves
// before the barrier: the column check guards the row loop only.
// Why 32 rows at once: with cols / 32 blocks, only the row slices keep loads in flight;
// at 32 x 8 the block form was slower than one thread per column (0.72x on an H200),
// at 32 x 32 it is 2.85x (rows=32768, cols=2048; bench/column_shapes.py).
// bytes: dy and x read once, center read, dscale and dshift written. flops: 4 per element.
__global__ void column_grads(float* dy, float* x, float* center, float* dscale,
                             float* dshift, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float ds = 0.0f;
    float db = 0.0f;
    for (int r = 0; r < rows; r++) {
        float g = dy[(size_t)r * cols + c];
        float xc = x[(size_t)r * cols + c] - center[c];
        ds += g * xc;
        db += g;
    }
    dscale[c] = ds;
    dshift[c] = db;
}
