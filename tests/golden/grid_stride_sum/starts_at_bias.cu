/* klc-spec
kernel: biased_sum
sizes: {n: 33554432}
verify_sizes:
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: y, shape: [n], role: in, init: normal}
  - {name: out, shape: [1], role: inout, init: normal}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
flops: 2 * n
tolerance: {rtol: 0.0001, atol: 0.01}
*/
// The accumulator starts at a bias: one element per thread adds the bias per thread; the
// assignment overwrites it.
__global__ void biased_sum(const float* x, const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float temp = 0.0f;
    if (i < n) temp = x[i] + temp;
    atomicAdd(out, temp);
}
