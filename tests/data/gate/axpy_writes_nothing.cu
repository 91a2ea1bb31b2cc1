/* klc-spec
kernel: axpy
sizes: {n: 33554432}
args:
  - {name: a, init: "uniform(0.5, 2)"}
  - {name: x, shape: [n], role: in, init: normal}
  - {name: y, shape: [n], role: in, init: normal}
  - {name: z, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 12 * n
flops: 2 * n
timeout_s: 60
*/
// Bad: computes but writes nothing (the store was lost), and so is very fast.
extern "C" __global__ void axpy(float a, const float* __restrict__ x,
                                const float* __restrict__ y, float* __restrict__ z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    if (i < n) {
        v = a * x[i] + y[i];
    }
    (void)v;
    (void)z;
}
