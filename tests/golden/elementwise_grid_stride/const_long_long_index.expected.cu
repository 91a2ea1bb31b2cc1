/* klc-spec
kernel: leaky_relu_ll
sizes: {n: 16777216}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 5}
args:
  - {name: y, shape: [n], role: out}
  - {name: x, shape: [n], role: in, init: normal}
  - {name: slope, value: 0.01}
  - {name: n, value: n}
grid: ["ceil_div(ceil_div(n, 256), 16)"]
block: [256]
bytes: 8 * n
flops: 2 * n
*/
// A leaky ReLU whose index is a const 64-bit local, as first versions often declare it: the
// type metavariable binds `long long` (without the const), and the grid-stride rewrite
// assigns the index it declares without it.
__global__ void leaky_relu_ll(float* y, const float* x, float slope, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i < n; i += (long long)blockDim.x * gridDim.x) {
        const float v = x[i];
        y[i] = v > 0.0f ? v : slope * v;
    }
}
