/* klc-spec
kernel: rms_norm_half
sizes: {rows: 16384, cols: 4096}
verify_sizes:
  - {rows: 7, cols: 33}
  - {rows: 64, cols: 256}
args:
  - {name: y, shape: [rows, cols], role: out}
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: w, shape: [cols], role: in, init: normal}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 4 * rows * cols + 2 * cols
flops: 3 * rows * cols
tolerance: {rtol: 0.01, atol: 0.01}
*/
// A first RMS norm on __half rows: one thread per row, float sums, two passes over the row.
#include <cuda_fp16.h>

__global__ void rms_norm_half(__half* y, const __half* x, const __half* w, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const __half* xr = x + (size_t)r * cols;
    float ss = 0.0f;
    for (int c = 0; c < cols; c++) {
        float v = __half2float(xr[c]);
        ss += v * v;
    }
    float inv = rsqrtf(ss / cols + 1e-6f);
    for (int c = 0; c < cols; c++) {
        y[(size_t)r * cols + c] = __float2half(__half2float(xr[c]) * inv * __half2float(w[c]));
    }
}
