/* klc-spec
kernel: silu_mul_fp16
sizes: {tokens: 4096, hidden: 4096}
args:
  - {name: out, shape: [tokens, hidden], role: out}
  - {name: gate, shape: [tokens, hidden], role: in, init: "normal(0, 2)"}
  - {name: up, shape: [tokens, hidden], role: in, init: normal}
  - {name: tokens, value: tokens}
  - {name: hidden, value: hidden}
grid: ["ceil_div(tokens * hidden, 256)"]
block: [256]
bytes: 6 * tokens * hidden
*/
// The gated MLP's SiLU(gate) * up on fp16 activations (the half-precision sibling of the
// bf16 kernels here): widened to float, computed, rounded back to __half. The gate compares
// with its float16 tolerance (rtol 1e-2, atol 1e-3).
// bytes: gate and up read once, out written once, 2 bytes each.
#include <cuda_fp16.h>

__global__ void silu_mul_fp16(__half* out, const __half* gate, const __half* up, int tokens,
                              int hidden) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < tokens * hidden) {
        float g = __half2float(gate[i]);
        float u = __half2float(up[i]);
        out[i] = __float2half(g / (1.0f + expf(-g)) * u);
    }
}
