/* klc-spec
kernel: residual_matvec
template: {T: float}
sizes: {H: 4096}
verify_sizes:
  - {H: 256}
  - {H: 999}
  - {H: 3}
args:
  - {name: y, shape: [H], role: out}
  - {name: x, shape: [H], role: in, init: normal}
  - {name: W, shape: [H, H], role: in, init: "normal(0, 0.02)"}
  - {name: h, shape: [H], role: in, init: normal}
  - {name: H, value: H}
grid: ["ceil_div(H, 64)"]
block: [64]
bytes: 4 * H * H + 12 * H
flops: 2 * H * H
tolerance: {rtol: 0.0005, atol: 0.00001}
timeout_s: 120
*/
// A residual connection around a matrix-vector product, y = x + W h, templated: the sum of
// each output starts at the residual `T v = x[i];`; a row pointer is declared between the
// index and the bounds check.
template <typename T>
__global__ void residual_matvec(T* y, const T* x, const T* W, const T* h, long H) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const T* w = W + (size_t)i * H;
    if (i < H) {
        T v = x[i];
        for (int j = 0; j < H; j++) {
            const T hj = h[j];
            v += w[j] * hj;
        }
        y[i] = v;
    }
}
