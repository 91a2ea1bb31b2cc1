/* klc-spec
kernel: layernorm_backward
sizes: {rows: 16384, cols: 4096}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 1001, cols: 999}
  - {rows: 37, cols: 5}
args:
  - {name: dy, shape: [rows, cols], role: in, init: normal}
  - {name: x, shape: [rows, cols], role: in, init: "normal(0.5, 1)"}
  - {name: gamma, shape: [cols], role: in, init: "uniform(0.5, 1.5)"}
  - {name: mean, shape: [rows], role: in, init: "normal(0.5, 0.1)"}
  - {name: rstd, shape: [rows], role: in, init: "uniform(0.5, 2)"}
  - {name: dx, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 256)"]
block: [256]
bytes: 12 * rows * cols + 4 * cols + 8 * rows
flops: 10 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 180
*/
// The input gradient of layer normalisation y = (x - mean) * rstd * gamma + beta, given the
// forward pass's per-row mean and rstd (1 / standard deviation) and the output gradient dy:
//   xhat = (x - mean[r]) * rstd[r],  g = dy * gamma
//   dx = rstd[r] * (g - mean over c of g - xhat * mean over c of (g * xhat))
// (gamma and beta gradients are not computed here). One thread per row: a pass for the two
// row means, a second pass (reading x and dy again) for dx.
// bytes: dy and x read once, dx written once (12 * rows * cols), gamma read once
// (4 * cols), mean and rstd read once (8 * rows).
// flops per element: xhat (2), g (1), the two sums (1 + 2), dx (4): 10.
// The tolerance is relative to the size of dx over the buffer, so reordered sums pass.
__global__ void layernorm_backward(const float* dy, const float* x, const float* gamma,
                                   const float* mean, const float* rstd, float* dx, int rows,
                                   int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float mu = mean[r];
        float rs = rstd[r];
        float sum_g = 0.0f;
        float sum_gx = 0.0f;
        for (int c = 0; c < cols; c++) {
            float xhat = (x[r * cols + c] - mu) * rs;
            float g = dy[r * cols + c] * gamma[c];
            sum_g += g;
            sum_gx += g * xhat;
        }
        float mean_g = sum_g / cols;
        float mean_gx = sum_gx / cols;
        for (int c = 0; c < cols; c++) {
            float xhat = (x[r * cols + c] - mu) * rs;
            float g = dy[r * cols + c] * gamma[c];
            dx[r * cols + c] = rs * (g - mean_g - xhat * mean_gx);
        }
    }
}
