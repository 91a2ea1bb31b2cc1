/* klc-spec
kernel: split_rows
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
// Near miss: a statement before the check reads the index; it would be computed for the
// first element only (no match).
__global__ void split_rows(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int col = i % 64;
    if (i < n) {
        out[i] = in[i] * (float)col;
    }
}
