/* klc-spec
kernel: first_threads
sizes: {n: 16777216}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 5}
args:
  - {name: out, shape: [n], role: out}
  - {name: in, shape: [n], role: in, init: normal}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Near miss: the bound is a macro of the grid's size: a smaller grid would change it
// (refused).
#define LIVE (blockDim.x * gridDim.x / 2)

__global__ void first_threads(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < LIVE) {
        out[i] = in[i] + 1.0f;
    }
}
