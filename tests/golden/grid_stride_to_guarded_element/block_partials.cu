/* klc-spec
kernel: partial_sums
sizes: {n: 1048576}
args:
  - {name: partial, shape: [64], role: out}
  - {name: x, shape: [n], role: in}
  - {name: n, value: n}
grid: [64]
block: [1]
bytes: 4 * n
*/
// One partial sum per block: the output counts blocks, so the grid may not grow.
__global__ void partial_sums(float* partial, const float* x, int n) {
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        s += x[i];
    }
    partial[blockIdx.x] = s;
}
