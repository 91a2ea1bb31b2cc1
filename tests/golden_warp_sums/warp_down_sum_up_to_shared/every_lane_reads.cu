/* klc-spec
kernel: prefixish
sizes: {n: 4096}
args:
  - {name: x, shape: [n], role: in}
  - {name: y, shape: [n], role: out}
grid: ["n // 32"]
block: [32]
*/
// Every lane stores its partial sum: the other lanes' values matter, no rewrite.
__global__ void prefixish(const float* x, float* y) {
    float t = x[blockIdx.x * 32 + threadIdx.x];
    for (int i = 1; i < 32; i <<= 1) t += __shfl_down_sync(0xffffffffu, t, i);
    y[blockIdx.x * 32 + threadIdx.x] = t;
}
