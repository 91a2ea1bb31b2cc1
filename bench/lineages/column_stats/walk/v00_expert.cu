/* klc-spec
kernel: column_stats
sizes: {rows: 65536, cols: 1024}
verify_sizes:
  - {rows: 512, cols: 256}
  - {rows: 301, cols: 999}
  - {rows: 2, cols: 3}
args:
  - {name: x, shape: [rows, cols], role: in, init: "normal(1, 3)"}
  - {name: mean, shape: [cols], role: out}
  - {name: rstd, shape: [cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 32)"]
block: [32, 32]
bytes: 4 * rows * cols + 8 * cols
flops: 3 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 120
*/
// Per-column statistics of a row-major rows x cols matrix (a feature's mean and inverse
// standard deviation over a batch):
//   mean[c] = sum_r x[r, c] / rows,  rstd[c] = 1 / sqrt(sum_r x[r, c]^2 / rows - mean^2 + 1e-5)
// with both sums kept in double, so the one-pass formula keeps its precision.
// The expert of the column_stats lineage. A 32 x 32 block reduces 32 neighbouring columns:
// threadIdx.x picks the column (coalesced rows), threadIdx.y a slice of the rows (every
// 32nd), so 32 threads share a column. Both partial sums meet in shared memory after one
// barrier; the slice-0 thread adds them in slice order (deterministic, no atomics) and
// writes the column. The column check guards only the row loop and the epilogue, so every
// thread reaches the barrier.
// Why 32 rows at once: with cols / 32 blocks, only the row slices keep loads in flight;
// at 32 x 8 the block form was slower than one thread per column (0.72x on an H200),
// at 32 x 32 it is 2.85x (rows=32768, cols=2048; bench/column_shapes.py).
// bytes: x read once, mean and rstd written once. flops: 3 per element.
__global__ void column_stats(float* x, float* mean, float* rstd, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    double s = 0.0, sq = 0.0;
    __shared__ decltype(s) part_s[1024];
    __shared__ decltype(sq) part_sq[1024];
    if (c < cols) {
        for (long r = threadIdx.y; r < rows; r += blockDim.y) {
            double v = x[r * cols + c];
            s += v;
            sq += v * v;
        }
    }
    part_s[threadIdx.y * blockDim.x + threadIdx.x] = s;
    part_sq[threadIdx.y * blockDim.x + threadIdx.x] = sq;
    __syncthreads();
    if (c < cols && threadIdx.y == 0) {
        for (int k = 1; k < blockDim.y; k++) {
            s += part_s[k * blockDim.x + threadIdx.x];
            sq += part_sq[k * blockDim.x + threadIdx.x];
        }
        double m = s / rows;
        mean[c] = (float)m;
        rstd[c] = (float)(1.0 / sqrt(sq / rows - m * m + 1e-5));
    }
}
