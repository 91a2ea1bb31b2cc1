/* klc-spec
kernel: gelu_bf16
sizes: {n: 33554432}
args:
  - {name: out, shape: [n], role: out}
  - {name: inp, shape: [n], role: in, init: "normal(0, 2)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 4 * n
*/
// GELU (tanh approximation) on bfloat16 activations, as a mixed-precision training step
// stores them: each element is widened to float, computed in float, rounded back to bf16.
// bytes: inp read once and out written once, 2 bytes each. The gate compares bf16 outputs
// with its bf16 tolerance (rtol 2e-2, atol 1e-2): one rounding step of bf16 is 2^-8.
#include <cuda_bf16.h>
#include <math.h>

__global__ void gelu_bf16(__nv_bfloat16* out, const __nv_bfloat16* inp, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = __bfloat162float(inp[i]);
        float k = sqrtf(2.0f / (float)M_PI);
        float y = 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
        out[i] = __float2bfloat16(y);
    }
}
