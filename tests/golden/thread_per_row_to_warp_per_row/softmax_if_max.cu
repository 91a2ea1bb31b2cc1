/* klc-spec
kernel: softmax_if_max
sizes: {rows: 8192, cols: 1024}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
args:
  - {name: in, shape: [rows, cols], role: in, init: "normal(0, 3)"}
  - {name: out, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 8 * rows * cols
flops: 4 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 180
*/
// A naive softmax, one thread per row: the maximum found with an if, the row reached with
// &in[...] row pointers, the normalisation multiplied in place by the reciprocal.
__global__ void softmax_if_max(const float* in, float* out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* __restrict__ src = &in[r * cols];
        float* __restrict__ dst = &out[r * cols];
        float maxv = src[0];
        for (int k = 0; k < cols; k++) {
            if (src[k] > maxv) {
                maxv = src[k];
            }
        }
        float total = 0.0f;
        for (int k = 0; k < cols; k++) {
            float e = expf(src[k] - maxv);
            dst[k] = e;
            total += e;
        }
        float inv = 1.0f / total;
        for (int k = 0; k < cols; k++) {
            dst[k] *= inv;
        }
    }
}
