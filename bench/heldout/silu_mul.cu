/* klc-spec
kernel: silu_mul
sizes: {tokens: 4096, hidden: 8192}
verify_sizes:
  - {tokens: 64, hidden: 1024}
  - {tokens: 37, hidden: 1001}
  - {tokens: 3, hidden: 5}
args:
  - {name: x, shape: [tokens, 2 * hidden], role: in, init: "normal(0, 2)"}
  - {name: out, shape: [tokens, hidden], role: out}
  - {name: tokens, value: tokens}
  - {name: hidden, value: hidden}
grid: ["ceil_div(tokens * hidden, 256)"]
block: [256]
bytes: 12 * tokens * hidden
flops: 4 * tokens * hidden
*/
// The gated activation of a SwiGLU MLP: x holds, for each token, the gate projection
// followed by the up projection (row-major tokens x 2*hidden), and
//   out[t, i] = silu(x[t, i]) * x[t, hidden + i],   silu(g) = g / (1 + exp(-g)).
// One output element per thread over the flattened output.
// bytes: x read once (8 * tokens * hidden), out written once (4 * tokens * hidden).
// flops: negate, add, divide, multiply (4) per output; expf is not counted.
__global__ void silu_mul(const float* x, float* out, int tokens, int hidden) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < tokens * hidden) {
        int t = idx / hidden;
        int i = idx % hidden;
        float g = x[t * 2 * hidden + i];
        float u = x[t * 2 * hidden + hidden + i];
        out[idx] = g / (1.0f + expf(-g)) * u;
    }
}
