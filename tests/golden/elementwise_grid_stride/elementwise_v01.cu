/* klc-spec
kernel: leaky_relu_scaled
sizes: {n: 16777216}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 77}
args:
  - {name: out, shape: [n], role: out}
  - {name: in, shape: [n], role: in, init: normal}
  - {name: slope, value: 0.01}
  - {name: scale, value: 1.5}
  - {name: n, value: n}
grid: ["(ceil_div(n, 256 * 16)) * 16"]
block: [256]
bytes: 8 * n
flops: 2 * n
*/
// out[i] = scale * leaky_relu(in[i], slope): an element-wise kernel, memory bound. The
// expert of the elementwise lineage; its optimization is one separable code shape
// (README.md names the pass that removes it):
//   - a grid-stride loop: a grid 16 times smaller than one thread per element, each thread
//     walks its elements blockDim.x * gridDim.x apart (so a warp's accesses stay coalesced),
//     which amortises each thread's set-up and keeps the grid to a few waves;
//   - const __restrict__ input.
// The loop advances the index the kernel computed (for (; i < n; i += stride)), with the
// stride in the index's type.
__global__ void leaky_relu_scaled(float* __restrict__ out, const float* __restrict__ in,
                                  float slope, float scale, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float neg = slope * scale;
    if (i < n) {
        float v = in[i];
        out[i] = v > 0.0f ? scale * v : neg * v;
    }
}
