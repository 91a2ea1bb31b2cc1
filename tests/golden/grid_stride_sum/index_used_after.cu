/* klc-spec
kernel: dot_and_copy
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
// The index is read again after the element: it cannot move into a loop.
__global__ void dot_and_copy(const float* x, float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float temp = 0.0f;
    if (i < n) temp = x[i] * x[i];
    atomicAdd(out, temp);
    if (i < n) y[i] = x[i];
}
