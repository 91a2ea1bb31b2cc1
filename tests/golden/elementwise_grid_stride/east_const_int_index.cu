/* klc-spec
kernel: add_bias_i
sizes: {n: 4194304}
verify_sizes:
  - {n: 65536}
  - {n: 1000003}
  - {n: 3}
args:
  - {name: out, shape: [n], role: out}
  - {name: in, shape: [n], role: in, init: normal}
  - {name: b, value: 1.5}
  - {name: n, value: n}
grid: ["ceil_div(n, 128)"]
block: [128]
bytes: 8 * n
flops: n
*/
// `int const`, the const written after its type, the bound a parameter the spec keeps
// small: matched as `const int i`, the type metavariable bound to `int`.
__global__ void add_bias_i(float* out, const float* in, float b, int n) {
    int const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] + b;
    }
}
