/* klc-spec
kernel: col_sum_count
sizes: {rows: 4096, cols: 1024}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: out, shape: [cols], role: out}
  - {name: hits, shape: [1], role: inout, init: "zeros"}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 256)"]
block: [256]
bytes: 4 * rows * cols + 4 * cols
flops: rows * cols
*/
// Near miss: code after the column's check runs once per thread; with eight threads per
// column it would run eight times.
__global__ void col_sum_count(float* x, float* out, int* hits, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        float s = 0.0f;
        for (int r = 0; r < rows; r++) {
            s += x[r * cols + c];
        }
        out[c] = s;
    }
    atomicAdd(hits, 1);
}
