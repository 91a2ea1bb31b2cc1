/* klc-spec
kernel: row_sums
sizes: {n: 16777216}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 5}
args:
  - {name: out, shape: [n], role: out}
  - {name: in, shape: [n, 64], role: in, init: normal}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Near miss: one row per thread (a loop in the body). Not element-wise work: a grid-stride
// loop would shrink a grid that is already one thread per row (refused).
__global__ void row_sums(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int c = 0; c < 64; c++) s += in[i * 64 + c];
        out[i] = s;
    }
}
