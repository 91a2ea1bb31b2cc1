/* klc-spec
kernel: column_norm
sizes: {rows: 32768, cols: 2048}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 301, cols: 999}
  - {rows: 3, cols: 5}
args:
  - {name: w, shape: [rows, cols], role: in, init: normal}
  - {name: norm, shape: [cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 32)"]
block: [32, 32]
bytes: 4 * rows * cols + 4 * cols
flops: 2 * rows * cols
tolerance: {rtol: 0.0002, atol: 0.00001}
timeout_s: 120
*/
// Euclidean norm of every column of a row-major rows x cols matrix (weight normalisation):
//   norm[c] = sqrt(sum over r of w[r, c]^2).
// The expert of the column_norm lineage. A 32 x 32 block reduces 32 neighbouring columns:
// threadIdx.x picks the column (coalesced rows), threadIdx.y every 32nd row, so 32 threads
// share a column. The partial sums meet in shared memory after one barrier; then every
// thread but the slice-0 thread of an in-range column leaves, and that one adds them in
// slice order (deterministic, no atomics) and writes the column. No thread leaves before
// the barrier: the column check guards the row loop only.
// Why 32 rows at once: with cols / 32 blocks, only the row slices keep loads in flight;
// at 32 x 8 the block form was slower than one thread per column (0.72x on an H200),
// at 32 x 32 it is 2.85x (rows=32768, cols=2048; bench/column_shapes.py).
// bytes: w read once, norm written once. flops: 2 per element.
__global__ void column_norm(float* w, float* norm, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    float ss = 0.0f;
    __shared__ decltype(ss) part[1024];
    if (c < cols) {
        for (int r = threadIdx.y; r < rows; r += blockDim.y) {
            float v = w[(size_t)r * cols + c];
            ss += v * v;
        }
    }
    part[threadIdx.y * blockDim.x + threadIdx.x] = ss;
    __syncthreads();
    if (c >= cols || threadIdx.y != 0) return;
    for (int k = 1; k < blockDim.y; k++) {
        ss += part[k * blockDim.x + threadIdx.x];
    }
    norm[c] = sqrtf(ss);
}
