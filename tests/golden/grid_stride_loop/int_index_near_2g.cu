/* klc-spec
kernel: scale_copy
template: {T: float}
sizes: {n: 2100000000}
verify_sizes:
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: y, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
flops: n
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// The same element-wise scale at 2.1e9 elements: a grid-stride int index would pass 2^31.
template <typename T>
__global__ void scale_copy(const T *x, T *y, int n) {
    const T a = T(0.5);
    {
        int i = blockIdx.x * 256 + threadIdx.x;
        if (i < n) {
            size_t off = (size_t)i;
            y[off] = a * x[off];
        }
    }
}
