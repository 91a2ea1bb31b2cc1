/* klc-spec
kernel: add_bias_u
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
// No match: `unsigned const i`, which tree-sitter reads as one type holding the const (the
// type metavariable would bind `unsigned const` and write it back: the cast
// `(unsigned const)` and a grid-stride step assigning the const index, which does not
// compile). `const unsigned i` and `int const i` are matched, their type bound without it.
__global__ void add_bias_u(float* out, const float* in, float b, unsigned n) {
    unsigned const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] + b;
    }
}
