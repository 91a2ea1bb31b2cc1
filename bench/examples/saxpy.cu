/* klc-spec
kernel: saxpy
sizes: {n: 67108864}
args:
  - {name: a, init: "uniform(0.5, 2)"}
  - {name: x, shape: [n], role: in, init: normal}
  - {name: y, shape: [n], role: inout, init: normal}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 12 * n
flops: 2 * n
*/
// y = a * x + y, one element per thread: the memory-bound baseline of the gate's SOL figures.
extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y,
                                 int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
