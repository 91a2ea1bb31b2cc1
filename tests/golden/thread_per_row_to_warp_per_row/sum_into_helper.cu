/* klc-spec
kernel: row_sum_acc
sizes: {rows: 4096, cols: 4096}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: y, shape: [rows], role: inout, init: normal}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 4 * rows * cols
flops: rows * cols
verify_sizes:
  - {rows: 37, cols: 99}
timeout_s: 60
*/
// A near miss: the row's sum handed to a helper of the file that adds it into y[r] through
// a pointer: every lane of the row's warp would call it and add it. Refused.
__device__ void accumulate(float* p, float v) { *p += v; }

__global__ void row_sum_acc(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; c++) {
            s += x[(size_t)r * cols + c];
        }
        accumulate(&y[r], s);
    }
}
