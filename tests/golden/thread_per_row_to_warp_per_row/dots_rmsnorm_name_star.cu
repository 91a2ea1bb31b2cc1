/* klc-spec
kernel: rms_norm
sizes: {rows: 4096, cols: 1024}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
args:
  - {name: inp, shape: [rows, cols], role: in, init: normal}
  - {name: weight, shape: [cols], role: in, init: normal}
  - {name: out, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 8 * rows * cols
flops: 4 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.00001}
timeout_s: 180
*/
// The RMS norm with the star at the name and two constants declared before the check, one of
// them the reciprocal of the width.
__global__ void rms_norm(const float *inp, const float *weight, float *out, int rows,
                         int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    const float eps = 1e-6f;
    const float inv_n = 1.0f / cols;
    if (row < rows) {
        const float *x = inp + (size_t)row * cols;
        float *y = out + (size_t)row * cols;
        float acc = 0.0f;
        for (int c = 0; c < cols; ++c) {
            const float v = x[c];
            acc += v * v;
        }
        const float scale = rsqrtf(acc * inv_n + eps);
        for (int c = 0; c < cols; ++c) {
            y[c] = weight[c] * (x[c] * scale);
        }
    }
}
