/* klc-spec
kernel: scale_then_flag
sizes: {n: 16777216}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 5}
args:
  - {name: out, shape: [n], role: out}
  - {name: in, shape: [n], role: in, init: normal}
  - {name: n, value: n}
  - {name: done, shape: [1], role: out}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Near miss: code follows the bounds check and reads the index: a loop that advances the
// index would leave it past n there (refused).
__global__ void scale_then_flag(float* out, const float* in, int n, int* done) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = 2.0f * in[i];
    }
    if (i == 0) done[0] = 1;
}
