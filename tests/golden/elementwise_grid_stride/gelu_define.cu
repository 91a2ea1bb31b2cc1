/* klc-spec
kernel: gelu_tanh
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
// GELU (tanh form) as a first kernel writes it: T* spacing, a #define constant, an if-guard.
#define K_GELU 0.7978845608f
__global__ void gelu_tanh(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = in[i];
        out[i] = 0.5f * x * (1.0f + tanhf(K_GELU * (x + 0.044715f * x * x * x)));
    }
}
