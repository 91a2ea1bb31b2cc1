/* klc-spec
kernel: stencil_1d
sizes: {n: 33554432}
args:
  - {name: in, shape: [n], role: in, init: normal}
  - {name: out, shape: [n], role: out}
  - {name: w, shape: [7], role: in, init: "uniform(-1, 1)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n + 28
flops: 14 * n
*/
// family: stencil
// style: #define radius, clamped (replicate) boundary with if, weights from a buffer, a plain loop over the window
// 1D convolution with a (2 RADIUS + 1)-tap filter and replicated edges:
//   out[i] = sum over k in [-RADIUS, RADIUS] of w[k + RADIUS] * in[clamp(i + k, 0, n - 1)].
// bytes: in read once (neighbours come from cache), out written, the 7 weights.
// flops: a multiply-add per tap.
#define RADIUS 3

__global__ void stencil_1d(const float* in, float* out, const float* w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = 0.0f;
        for (int k = -RADIUS; k <= RADIUS; k++) {
            int j = i + k;
            if (j < 0) j = 0;
            if (j > n - 1) j = n - 1;
            acc += w[k + RADIUS] * in[j];
        }
        out[i] = acc;
    }
}
