/* klc-spec
kernel: count_from_memory
sizes: {n: 16777216}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 5}
args:
  - {name: out, shape: [n], role: out}
  - {name: in, shape: [n], role: in, init: normal}
  - {name: len, shape: [1], role: in, init: 100}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Near miss: the bound is read from memory at every test of a grid-stride loop; the guard
// wants a bound that reads no memory (refused).
__global__ void count_from_memory(float* out, const float* in, const int* len) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len[0]) {
        out[i] = in[i] + 1.0f;
    }
}
