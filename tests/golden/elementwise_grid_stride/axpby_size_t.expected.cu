/* klc-spec
kernel: axpby_size_t
sizes: {n: 16777216}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 5}
args:
  - {name: y, shape: [n], role: out}
  - {name: a, shape: [n], role: in, init: normal}
  - {name: b, shape: [n], role: in, init: normal}
  - {name: alpha, value: 0.5}
  - {name: n, value: n}
grid: ["ceil_div(ceil_div(n, 256), 16)"]
block: [256]
*/
// y = alpha * a + (1 - alpha) * b in double: size_t index and size, a declaration between
// the index and the check (it does not read the index), an unbraced if, n > i.
__global__ void axpby_size_t(float *y, const float *a, const float *b, double alpha,
                             size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const double beta = 1.0 - alpha;
    for (; i < n; i += (size_t)blockDim.x * gridDim.x) {
        y[i] = (float)(alpha * a[i] + beta * b[i]);
    }
}
