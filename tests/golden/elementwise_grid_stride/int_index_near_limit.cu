/* klc-spec
kernel: add_one
sizes: {n: 2100000000}
verify_sizes:
  - {n: 1048576}
  - {n: 5}
args:
  - {name: y, shape: [n], role: out}
  - {name: x, shape: [n], role: in, init: normal}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// The spec runs it at 2.1e9 elements with an int index: the last grid-stride step would
// take the index past INT_MAX (n - 1 + the threads launched is about 4.2e9).
__global__ void add_one(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = x[i] + 1.0f; }
}
