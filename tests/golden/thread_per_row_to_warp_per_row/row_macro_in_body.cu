/* klc-spec
kernel: row_sum_macro
sizes: {rows: 4096, cols: 1024}
verify_sizes:
  - {rows: 37, cols: 99}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: y, shape: [rows], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 4 * rows * cols
flops: rows * cols
timeout_s: 60
*/
// A near miss: the body stores through a macro of the thread's global index. Every lane of
// the row's warp (or thread of its block) would read another index there: refused
// (thread_free follows the macro; `not mentions` reads the body's own text only).
#define GID (blockIdx.x * blockDim.x + threadIdx.x)
__global__ void row_sum_macro(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; c++) {
            s += x[(size_t)r * cols + c];
        }
        y[GID] = s;
    }
}
