/* klc-spec
kernel: col_sum_and_max_sq
sizes: {rows: 16384, cols: 2048}
verify_sizes:
  - {rows: 301, cols: 999}
  - {rows: 3, cols: 5}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: mean, shape: [cols], role: out}
  - {name: ms, shape: [cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["(ceil_div(cols, 128)) * 4"]
block: ["ceil_div(128, 4)", 32]
bytes: 4 * rows * cols + 8 * cols
flops: 3 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// Column mean and mean square: the check spelled cols <= c, a constant declared after it,
// a double and a float accumulator, a 64-bit offset, an early return in the epilogue.
__global__ void col_sum_and_max_sq(const float* x, float* mean, float* ms, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    const float inv = 1.0f / rows;
    double s = 0.0;
    float q = 0.0f;
    __shared__ decltype(s) part_ds[1024];
    __shared__ decltype(q) part_db[1024];
    if (c < cols) {
        for (int r = threadIdx.y; r < rows; r += blockDim.y) {
            float v = x[(long)r * cols + c];
            s += v;
            q += v * v;
        }
    }
    part_ds[threadIdx.y * blockDim.x + threadIdx.x] = s;
    part_db[threadIdx.y * blockDim.x + threadIdx.x] = q;
    __syncthreads();
    if (c >= cols || threadIdx.y != 0) return;
    for (int k = 1; k < blockDim.y; k++) {
        s += part_ds[k * blockDim.x + threadIdx.x];
        q += part_db[k * blockDim.x + threadIdx.x];
    }
    mean[c] = (float)s * inv;
    if (ms == nullptr) return;
    ms[c] = q * inv;
}
