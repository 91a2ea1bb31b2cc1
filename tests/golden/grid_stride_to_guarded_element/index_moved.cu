/* klc-spec
kernel: skip_pairs
sizes: {n: 1048576}
args:
  - {name: y, shape: [n], role: out}
  - {name: x, shape: [n], role: in}
  - {name: n, value: n}
grid: [128]
block: [256]
bytes: 8 * n
*/
// The body moves its index: not one element per iteration.
__global__ void skip_pairs(float* y, const float* x, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = x[i];
        i += 1;
    }
}
