/* klc-spec
kernel: swiglu_forward
sizes: {N: 8192, C: 4096}
verify_sizes:
  - {N: 64, C: 1024}
  - {N: 101, C: 999}
  - {N: 3, C: 7}
args:
  - {name: out, shape: [N, C], role: out}
  - {name: inp, shape: [N, "2 * C"], role: in, init: "normal(0, 2)"}
  - {name: N, value: N}
  - {name: C, value: C}
grid: ["ceil_div(N * C, 256)"]
block: [256]
bytes: 4 * N * 2 * C + 4 * N * C
flops: 4 * N * C
*/
// family: elementwise
// style: row pointer into a packed input, integer / and % for the row and column
// SwiGLU: the input row holds the gate half then the up half (N x 2C); out = silu(gate) * up.
// One output element per thread.
// bytes: inp read once (8NC), out written (4NC). flops: 4 per output (expf not counted).
__global__ void swiglu_forward(float* out, const float* inp, int N, int C) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N * C) {
        int row = idx / C;
        int col = idx % C;
        const float* x = inp + row * 2 * C;
        float g = x[col];
        float u = x[C + col];
        out[idx] = g / (1.0f + expf(-g)) * u;
    }
}
