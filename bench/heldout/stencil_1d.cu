/* klc-spec
kernel: stencil_1d
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 777}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: y, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
flops: 13 * n
*/
// A 7-point 1D stencil of radius 3 with fixed symmetric weights:
//   y[i] = sum over k in -3..3 of w[k + 3] * x[i + k], with x taken as 0 outside [0, n).
// One output per thread, each reading its 7 inputs from global memory.
// bytes: x read once (4n; neighbours shared between threads come from cache), y written
// once (4n). flops: 7 multiplies and 6 adds per output.
__global__ void stencil_1d(const float* x, float* y, int n) {
    const float w[7] = {0.05f, 0.1f, 0.2f, 0.3f, 0.2f, 0.1f, 0.05f};
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float sum = 0.0f;
        for (int k = -3; k <= 3; k++) {
            int j = i + k;
            if (j >= 0 && j < n) {
                sum += w[k + 3] * x[j];
            }
        }
        y[i] = sum;
    }
}
