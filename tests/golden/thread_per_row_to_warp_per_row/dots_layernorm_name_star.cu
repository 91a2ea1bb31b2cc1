/* klc-spec
kernel: layer_norm
sizes: {rows: 4096, cols: 1024}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
args:
  - {name: inp, shape: [rows, cols], role: in, init: normal}
  - {name: weight, shape: [cols], role: in, init: normal}
  - {name: bias, shape: [cols], role: in, init: normal}
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
// The layer norm with the star at the name, the epsilon and the reciprocal of the width
// declared before the check, and a comment among them.
__global__ void layer_norm(const float *inp, const float *weight, const float *bias,
                           float *out, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    const float epsilon = 1e-5f;
    // the mean and variance divide by the width
    const float inv_cols = 1.0f / (float)cols;
    if (r < rows) {
        const float *xr = inp + (size_t)r * cols;
        float *yr = out + (size_t)r * cols;
        float mean = 0.0f;
        for (int c = 0; c < cols; ++c) {
            mean += xr[c];
        }
        mean *= inv_cols;
        float var = 0.0f;
        for (int c = 0; c < cols; ++c) {
            float d = xr[c] - mean;
            var += d * d;
        }
        var *= inv_cols;
        const float rstd = rsqrtf(var + epsilon);
        for (int c = 0; c < cols; ++c) {
            yr[c] = (xr[c] - mean) * rstd * weight[c] + bias[c];
        }
    }
}
