/* klc-spec
kernel: saxpy
sizes: {n: 1048576}
args:
  - {name: a, value: 2}
  - {name: x, shape: [n], role: in}
  - {name: y, shape: [n], role: inout}
  - {name: n, value: n}
grid: ["(ceil_div(n, 256 * 8)) * 8"]
block: [256]
*/
// A grid-stride saxpy: one element per thread, and the spec's grid grows by the factor.
__global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y, int n) {
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            y[i] = a * x[i] + y[i];
        }
    }
}
