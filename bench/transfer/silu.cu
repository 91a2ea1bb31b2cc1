/* klc-spec
kernel: silu_kernel
template: {T: float}
sizes: {n: 33554432}
args:
  - {name: out, shape: [n], role: out}
  - {name: in, shape: [n], role: in, init: "normal(0, 3)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
flops: 3 * n
*/
// family: elementwise
// style: template over the element type, T *x spacing, early-return guard, 64-bit size (long)
// SiLU (swish): out = x / (1 + exp(-x)).
// bytes: in read, out written (8n). flops: 3 per element (exp not counted).
template <typename T>
__global__ void silu_kernel(T *out, const T *in, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T v = in[i];
    out[i] = v / ((T)1 + exp(-v));
}
