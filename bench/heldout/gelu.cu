/* klc-spec
kernel: gelu
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 777}
args:
  - {name: x, shape: [n], role: in, init: "normal(0, 2)"}
  - {name: y, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
flops: 8 * n
*/
// GELU, tanh form: y = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), one
// element per thread.
// bytes: x read once (4n), y written once (4n).
// flops: x^3 (2 multiplies), 0.044715 * x^3 + x (a multiply-add, 2), times sqrt(2 / pi)
// (1), 1 + tanh (1), 0.5 * x (1), the final product (1): 8 per element; tanhf itself is
// not counted.
__global__ void gelu(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
        y[i] = 0.5f * v * (1.0f + tanhf(inner));
    }
}
