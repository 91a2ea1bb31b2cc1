/* klc-spec
kernel: count_threads
sizes: {n: 16777216}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 5}
args:
  - {name: out, shape: [n], role: out}
  - {name: in, shape: [n], role: in, init: normal}
  - {name: n, value: n}
  - {name: launched, shape: [1], role: out, init: zeros}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Near miss: every thread counts itself before the check. A grid-stride loop runs the
// kernel with fewer threads, so the count would change (refused: no_stores).
__global__ void count_threads(float* out, const float* in, int n, unsigned int* launched) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(launched, 1u);
    if (i < n) {
        out[i] = in[i] * 3.0f;
    }
}
